// Command protobuf-json-fields prints, as JSON, how the Go types of the built-in Kubernetes kinds
// render as JSON: for every protobuf message reachable from the kinds of the API groups below, each
// field's protobuf number, JSON name, omitempty, whether it is inlined (an anonymous embedded struct)
// and its Go shape (pointer, slice, map, struct, scalar). The generated.proto files say how to decode
// the bytes; only the Go struct tags say which JSON the API server stores, so the decoder needs both.
// scripts/gen-k8s-protobuf-schema.mjs merges this output with the vendored .proto files.
package main

import (
	"encoding/json"
	"fmt"
	"os"
	"reflect"
	"sort"
	"strconv"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	batchv1 "k8s.io/api/batch/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	eventsv1 "k8s.io/api/events/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// Types with their own MarshalJSON: the TypeScript renderer implements each by message name.
var specialTypes = map[reflect.Type]string{
	reflect.TypeOf(metav1.Time{}):          "Time",
	reflect.TypeOf(metav1.MicroTime{}):     "MicroTime",
	reflect.TypeOf(metav1.FieldsV1{}):      "FieldsV1",
	reflect.TypeOf(resource.Quantity{}):    "Quantity",
	reflect.TypeOf(intstr.IntOrString{}):   "IntOrString",
	reflect.TypeOf(runtime.RawExtension{}): "RawExtension",
}

type field struct {
	GoName    string `json:"goName"`
	Number    int    `json:"number"`
	ProtoName string `json:"protoName"`
	// JSON key; empty when Inline.
	JSON      string `json:"json,omitempty"`
	Inline    bool   `json:"inline,omitempty"`
	OmitEmpty bool   `json:"omitempty,omitempty"`
	// pointer | slice | map | struct | bytes | string | bool | int | uint | float
	Shape string `json:"shape"`
}

type message struct {
	GoType string `json:"goType"`
	// Special: one of specialTypes' values; Wrapper: a named Go slice type sent as a message whose
	// single repeated field is its items (metav1.Verbs); otherwise a struct rendered field by field.
	Special string  `json:"special,omitempty"`
	Wrapper bool    `json:"wrapper,omitempty"`
	Fields  []field `json:"fields,omitempty"`
}

type kind struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Message    string `json:"message"`
}

type output struct {
	Kinds    []kind              `json:"kinds"`
	Messages map[string]*message `json:"messages"`
}

var typeMetaType = reflect.TypeOf(metav1.TypeMeta{})

func protoName(t reflect.Type) string {
	return strings.ReplaceAll(t.PkgPath(), "/", ".") + "." + t.Name()
}

func shapeOf(t reflect.Type) string {
	switch t.Kind() {
	case reflect.Pointer:
		return "pointer"
	case reflect.Slice:
		if t.Elem().Kind() == reflect.Uint8 {
			return "bytes"
		}
		return "slice"
	case reflect.Map:
		return "map"
	case reflect.Struct:
		return "struct"
	case reflect.String:
		return "string"
	case reflect.Bool:
		return "bool"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return "int"
	case reflect.Uint, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "uint"
	case reflect.Float32, reflect.Float64:
		return "float"
	}
	fail("unsupported Go kind %s (%s)", t.Kind(), t)
	return ""
}

func fail(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "protobuf-json-fields: "+format+"\n", args...)
	os.Exit(1)
}

type walker struct{ out output }

// visit records the message for the Go type t (a struct, a special type or a wrapper slice type)
// and every message its fields refer to.
func (w *walker) visit(t reflect.Type) {
	for t.Kind() == reflect.Pointer || (t.Kind() == reflect.Slice && t.Name() == "") || (t.Kind() == reflect.Map && t.Name() == "") {
		t = t.Elem()
	}
	if t.Kind() == reflect.Map {
		t = t.Elem() // named map types (ResourceList) are proto maps, not messages
		w.visit(t)
		return
	}
	if t.Kind() != reflect.Struct && !(t.Kind() == reflect.Slice && t.Name() != "" && t.Elem().Kind() != reflect.Uint8) {
		return
	}
	name := protoName(t)
	if _, seen := w.out.Messages[name]; seen {
		return
	}
	m := &message{GoType: t.PkgPath() + "." + t.Name()}
	w.out.Messages[name] = m
	if special, ok := specialTypes[t]; ok {
		m.Special = special
		return
	}
	if t.Kind() == reflect.Slice {
		m.Wrapper = true
		w.visit(t.Elem())
		return
	}
	if reflect.PointerTo(t).Implements(reflect.TypeOf((*json.Marshaler)(nil)).Elem()) {
		fail("%s has its own MarshalJSON but no renderer in specialTypes", m.GoType)
	}
	seenJSON := map[string]string{}
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		jsonTag, hasJSON := f.Tag.Lookup("json")
		jsonName, opts, _ := strings.Cut(jsonTag, ",")
		if jsonName == "-" && opts == "" {
			continue
		}
		for _, o := range strings.Split(opts, ",") {
			if o != "" && o != "omitempty" && o != "inline" {
				fail("%s.%s: json option %q is not supported", m.GoType, f.Name, o)
			}
		}
		pb, hasProto := f.Tag.Lookup("protobuf")
		if !hasProto {
			if f.Anonymous && f.Type == typeMetaType {
				continue // apiVersion/kind travel in runtime.Unknown's typeMeta, never inside the message
			}
			fail("%s.%s has a json tag but no protobuf tag", m.GoType, f.Name)
		}
		parts := strings.Split(pb, ",")
		number, err := strconv.Atoi(parts[1])
		if err != nil {
			fail("%s.%s: bad protobuf tag %q", m.GoType, f.Name, pb)
		}
		fd := field{GoName: f.Name, Number: number, Shape: shapeOf(f.Type), OmitEmpty: strings.Contains(","+opts+",", ",omitempty,")}
		for _, p := range parts[2:] {
			if v, ok := strings.CutPrefix(p, "name="); ok {
				fd.ProtoName = v
			}
		}
		// encoding/json: an anonymous struct field without a JSON name has its fields promoted;
		// any other field without a JSON name is keyed by its Go name.
		if jsonName == "" && f.Anonymous && f.Type.Kind() == reflect.Struct {
			fd.Inline = true
		} else {
			if jsonName == "" || !hasJSON {
				jsonName = f.Name
			}
			fd.JSON = jsonName
			if other, dup := seenJSON[jsonName]; dup {
				fail("%s: fields %s and %s share the JSON name %q", m.GoType, other, f.Name, jsonName)
			}
			seenJSON[jsonName] = f.Name
		}
		m.Fields = append(m.Fields, fd)
		w.visit(f.Type)
	}
}

func main() {
	scheme := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{
		corev1.AddToScheme, appsv1.AddToScheme, batchv1.AddToScheme, coordinationv1.AddToScheme,
		policyv1.AddToScheme, rbacv1.AddToScheme, eventsv1.AddToScheme, discoveryv1.AddToScheme,
		networkingv1.AddToScheme, autoscalingv1.AddToScheme, autoscalingv2.AddToScheme,
	} {
		if err := add(scheme); err != nil {
			fail("%v", err)
		}
	}
	metav1.AddToGroupVersion(scheme, schema.GroupVersion{Group: "meta.k8s.io", Version: "v1"})
	w := &walker{out: output{Messages: map[string]*message{}}}
	for gvk, t := range scheme.AllKnownTypes() {
		if gvk.Version == runtime.APIVersionInternal {
			continue
		}
		w.visit(t)
		w.out.Kinds = append(w.out.Kinds, kind{APIVersion: gvk.GroupVersion().String(), Kind: gvk.Kind, Message: protoName(t)})
	}
	sort.Slice(w.out.Kinds, func(i, j int) bool {
		a, b := w.out.Kinds[i], w.out.Kinds[j]
		if a.APIVersion != b.APIVersion {
			return a.APIVersion < b.APIVersion
		}
		return a.Kind < b.Kind
	})
	enc := json.NewEncoder(os.Stdout)
	enc.SetIndent("", " ")
	if err := enc.Encode(w.out); err != nil {
		fail("%v", err)
	}
}
