// Command clientgo-protobuf-check drives a cluster with real Go clients that send protobuf request
// bodies: client-go's typed clientset with ContentType application/vnd.kubernetes.protobuf, and
// controller-runtime's client at its defaults (protobuf for built-in kinds). It creates, reads, updates
// and deletes a ConfigMap, a Secret and a StatefulSet, checks every answer, and prints each request's
// Content-Type, Accept and response Content-Type, so the output shows what went over the wire.
//
//	node bin/kperturb.js cluster --port 18080 --kubeconfig-out /tmp/kc.yaml &
//	cd scripts/clientgo-protobuf-check && go run . -kubeconfig /tmp/kc.yaml
//
// Exit code 0 when every step passed, 1 otherwise. Not part of npm test (it needs Go).
package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"net/http"
	"os"
	"strings"
	"sync"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	ctrlclient "sigs.k8s.io/controller-runtime/pkg/client"
)

const protobuf = "application/vnd.kubernetes.protobuf"

// wireLog records each request's media types.
type wireLog struct {
	mu    sync.Mutex
	lines []string
	next  http.RoundTripper
}

func (w *wireLog) RoundTrip(req *http.Request) (*http.Response, error) {
	res, err := w.next.RoundTrip(req)
	verb := req.Method
	if req.URL.Query().Get("watch") == "true" || req.URL.Query().Get("watch") == "1" {
		verb = "WATCH"
	}
	line := fmt.Sprintf("%-6s %-58s body=%-38s accept=%-55s", verb, req.URL.Path, req.Header.Get("Content-Type"), req.Header.Get("Accept"))
	if err != nil {
		line += " error=" + err.Error()
	} else {
		line += fmt.Sprintf(" -> %d %s", res.StatusCode, res.Header.Get("Content-Type"))
	}
	w.mu.Lock()
	w.lines = append(w.lines, line)
	w.mu.Unlock()
	return res, err
}

func (w *wireLog) take() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := w.lines
	w.lines = nil
	return out
}

var failures int

func check(step string, err error) bool {
	if err != nil {
		failures++
		fmt.Printf("  FAIL %s: %v\n", step, err)
		return false
	}
	fmt.Printf("  ok   %s\n", step)
	return true
}

func expect(cond bool, format string, args ...any) error {
	if cond {
		return nil
	}
	return fmt.Errorf(format, args...)
}

func labels(run string) map[string]string { return map[string]string{"app": "check", "run": run} }

func statefulSet(name, run string) *appsv1.StatefulSet {
	return &appsv1.StatefulSet{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", Labels: labels(run)},
		Spec: appsv1.StatefulSetSpec{
			Replicas:    ptr(int32(1)),
			ServiceName: name,
			Selector:    &metav1.LabelSelector{MatchLabels: labels(run)},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels(run)},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{
					Name: "web", Image: "nginx:1.27",
					Ports: []corev1.ContainerPort{{Name: "http", ContainerPort: 80}},
				}}},
			},
		},
	}
}

func ptr[T any](v T) *T { return &v }

var secretBytes = []byte{0x00, 0xff, 0xfe, 'k', '8', 's', 0x00, 0x80}

// clientsetSteps uses client-go's typed clientset, as a controller built on client-go would.
func clientsetSteps(ctx context.Context, cs kubernetes.Interface, run string) {
	cms := cs.CoreV1().ConfigMaps("default")
	cm, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "cg-" + run, Namespace: "default", Labels: labels(run)}, Data: map[string]string{"a": "1"}}, metav1.CreateOptions{})
	if check("create ConfigMap", err) {
		check("created ConfigMap has uid and data", expect(cm.UID != "" && cm.Data["a"] == "1", "got uid=%q data=%v", cm.UID, cm.Data))
		cm.Data["a"] = "2"
		cm.Data["b"] = "3"
		updated, err := cms.Update(ctx, cm, metav1.UpdateOptions{})
		if check("update ConfigMap", err) {
			check("updated ConfigMap", expect(updated.Data["a"] == "2" && updated.Data["b"] == "3" && updated.ResourceVersion != cm.ResourceVersion, "got %v rv %s", updated.Data, updated.ResourceVersion))
		}
		_, err = cms.Update(ctx, cm, metav1.UpdateOptions{}) // cm still has the old resourceVersion
		check("stale update of ConfigMap is a Conflict", expect(err != nil && strings.Contains(err.Error(), "modified"), "got %v", err))
		got, err := cms.Get(ctx, cm.Name, metav1.GetOptions{})
		if check("get ConfigMap", err) {
			check("read ConfigMap", expect(got.Data["b"] == "3", "got %v", got.Data))
		}
		check("delete ConfigMap (DeleteOptions body with a UID precondition)", cms.Delete(ctx, cm.Name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &cm.UID}}))
	}

	secrets := cs.CoreV1().Secrets("default")
	s, err := secrets.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "cg-" + run, Namespace: "default"}, Type: corev1.SecretTypeOpaque,
		Data: map[string][]byte{"bin": secretBytes}}, metav1.CreateOptions{})
	if check("create Secret", err) {
		check("created Secret keeps binary data", expect(bytes.Equal(s.Data["bin"], secretBytes), "got %x", s.Data["bin"]))
		s.Data["extra"] = []byte("x")
		updated, err := secrets.Update(ctx, s, metav1.UpdateOptions{})
		if check("update Secret", err) {
			check("updated Secret", expect(string(updated.Data["extra"]) == "x" && bytes.Equal(updated.Data["bin"], secretBytes), "got %v", updated.Data))
		}
		check("delete Secret", secrets.Delete(ctx, s.Name, metav1.DeleteOptions{}))
	}

	sets := cs.AppsV1().StatefulSets("default")
	sts, err := sets.Create(ctx, statefulSet("cg-"+run, run), metav1.CreateOptions{})
	if check("create StatefulSet", err) {
		check("created StatefulSet", expect(sts.Spec.Replicas != nil && *sts.Spec.Replicas == 1 && sts.Spec.Template.Spec.Containers[0].Ports[0].ContainerPort == 80, "got %+v", sts.Spec))
		sts.Spec.Replicas = ptr(int32(3))
		updated, err := sets.Update(ctx, sts, metav1.UpdateOptions{})
		if check("update StatefulSet", err) {
			check("updated StatefulSet", expect(*updated.Spec.Replicas == 3 && updated.Generation > sts.Generation, "got replicas %d generation %d -> %d", *updated.Spec.Replicas, sts.Generation, updated.Generation))
		}
		check("delete StatefulSet", sets.Delete(ctx, sts.Name, metav1.DeleteOptions{PropagationPolicy: ptr(metav1.DeletePropagationBackground)}))
	}
}

// controllerRuntimeSteps uses controller-runtime's client at its defaults, as a kubebuilder operator does.
func controllerRuntimeSteps(ctx context.Context, c ctrlclient.Client, run string) {
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "cr-" + run, Namespace: "default"}, Data: map[string]string{"a": "1"}}
	if check("create ConfigMap", c.Create(ctx, cm)) {
		cm.Data["a"] = "2"
		check("update ConfigMap", c.Update(ctx, cm))
		var got corev1.ConfigMap
		if check("get ConfigMap", c.Get(ctx, types.NamespacedName{Namespace: "default", Name: cm.Name}, &got)) {
			check("read ConfigMap", expect(got.Data["a"] == "2", "got %v", got.Data))
		}
		check("delete ConfigMap", c.Delete(ctx, cm))
	}
	s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "cr-" + run, Namespace: "default"}, Data: map[string][]byte{"bin": secretBytes}}
	if check("create Secret", c.Create(ctx, s)) {
		s.StringData = map[string]string{"plain": "text"}
		check("update Secret", c.Update(ctx, s))
		check("Secret after update", expect(bytes.Equal(s.Data["bin"], secretBytes), "got %v", s.Data))
		check("delete Secret", c.Delete(ctx, s))
	}
	sts := statefulSet("cr-"+run, run)
	if check("create StatefulSet", c.Create(ctx, sts)) {
		sts.Spec.Replicas = ptr(int32(2))
		check("update StatefulSet", c.Update(ctx, sts))
		check("StatefulSet after update", expect(*sts.Spec.Replicas == 2, "got %d", *sts.Spec.Replicas))
		var list appsv1.StatefulSetList
		if check("list StatefulSets", c.List(ctx, &list, ctrlclient.InNamespace("default"), ctrlclient.MatchingLabels(labels(run)))) {
			check("listed StatefulSet", expect(len(list.Items) == 1, "got %d items", len(list.Items)))
		}
		check("delete StatefulSet", c.Delete(ctx, sts, ctrlclient.PropagationPolicy(metav1.DeletePropagationForeground)))
	}
}

// informerSteps starts controller-runtime's cache for ConfigMaps, as a manager does for a watched
// kind, and checks that it syncs and sees a ConfigMap created afterwards: list and watch responses
// arrive as JSON even though the informer asks for protobuf.
func informerSteps(ctx context.Context, cfg *rest.Config, c ctrlclient.Client, run string) {
	ctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	informers, err := cache.New(cfg, cache.Options{})
	if !check("new cache", err) {
		return
	}
	informer, err := informers.GetInformer(ctx, &corev1.ConfigMap{})
	if !check("ConfigMap informer", err) {
		return
	}
	added := make(chan string, 16)
	_, err = informer.AddEventHandler(toolscache.ResourceEventHandlerFuncs{AddFunc: func(obj any) {
		if cm, ok := obj.(*corev1.ConfigMap); ok {
			added <- cm.Name
		}
	}})
	if !check("add event handler", err) {
		return
	}
	go func() { _ = informers.Start(ctx) }()
	check("cache syncs", expect(informers.WaitForCacheSync(ctx), "did not sync"))
	name := "inf-" + run
	if !check("create ConfigMap after the sync", c.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"}})) {
		return
	}
	seen := false
	for !seen {
		select {
		case n := <-added:
			seen = n == name
		case <-ctx.Done():
			check("the watch delivers the new ConfigMap", ctx.Err())
			return
		}
	}
	check("the watch delivers the new ConfigMap", nil)
	var cached corev1.ConfigMap
	check("read it from the cache", informers.Get(ctx, types.NamespacedName{Namespace: "default", Name: name}, &cached))
	check("delete it", c.Delete(ctx, &cached))
}

func printWire(log *wireLog) {
	for _, line := range log.take() {
		fmt.Println("    " + line)
	}
}

func main() {
	kubeconfig := flag.String("kubeconfig", os.Getenv("KUBECONFIG"), "kubeconfig of the cluster to check")
	run := flag.String("run", fmt.Sprint(os.Getpid()), "suffix for object names")
	flag.Parse()
	base, err := clientcmd.BuildConfigFromFlags("", *kubeconfig)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	ctx := context.Background()
	log := &wireLog{}
	wrap := func(cfg *rest.Config) *rest.Config {
		cfg = rest.CopyConfig(cfg)
		cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper { log.next = rt; return log })
		return cfg
	}

	variants := []struct{ title, accept string }{
		{"client-go clientset, ContentType protobuf, AcceptContentTypes \"protobuf, application/json\"", protobuf + ", application/json"},
		{"client-go clientset, ContentType protobuf, default Accept (\"protobuf, */*\", as controller-runtime sends)", ""},
	}
	for i, v := range variants {
		cfg := wrap(base)
		cfg.ContentType = protobuf
		cfg.AcceptContentTypes = v.accept
		cs, err := kubernetes.NewForConfig(cfg)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(2)
		}
		fmt.Printf("== %s\n", v.title)
		clientsetSteps(ctx, cs, fmt.Sprintf("%s-%d", *run, i))
		printWire(log)
	}

	fmt.Println("== controller-runtime client at its defaults")
	c, err := ctrlclient.New(wrap(base), ctrlclient.Options{})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	controllerRuntimeSteps(ctx, c, *run)
	printWire(log)

	fmt.Println("== controller-runtime cache (an informer: LIST and WATCH asking for protobuf)")
	informerSteps(ctx, wrap(base), c, *run)
	printWire(log)

	if failures > 0 {
		fmt.Printf("%d step(s) failed\n", failures)
		os.Exit(1)
	}
	fmt.Println("all steps passed")
}
