// Command protobuf-vectors writes test vectors for kperturb's protobuf decoder
// (src/wire): realistic objects of built-in kinds encoded with apimachinery's official
// protobuf serializer (NAME.pb, the bytes client-go sends with ContentType
// application/vnd.kubernetes.protobuf) and the JSON the API server stores for them (NAME.json: the
// .pb decoded again by the same serializer, then encoded by apimachinery's JSON serializer).
//
//	go run . ../../test/cluster/protobuf/vectors
package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"time"

	appsv1 "k8s.io/api/apps/v1"
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
	jsonserializer "k8s.io/apimachinery/pkg/runtime/serializer/json"
	"k8s.io/apimachinery/pkg/runtime/serializer/protobuf"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
)

func ptr[T any](v T) *T { return &v }

var (
	created   = metav1.NewTime(time.Date(2024, 5, 17, 9, 30, 12, 0, time.UTC))
	later     = metav1.NewTime(time.Date(2024, 5, 17, 9, 31, 40, 0, time.UTC))
	renewTime = metav1.NewMicroTime(time.Date(2024, 5, 17, 9, 31, 41, 123456789, time.UTC))
)

func q(s string) resource.Quantity { return resource.MustParse(s) }

func labels() map[string]string {
	return map[string]string{"app.kubernetes.io/name": "db", "app.kubernetes.io/instance": "db1"}
}

func owner() []metav1.OwnerReference {
	return []metav1.OwnerReference{{
		APIVersion: "example.com/v1", Kind: "Database", Name: "db1",
		UID:        types.UID("5b3c1a4e-8f1c-4a5e-9d57-1c2b3a4d5e6f"),
		Controller: ptr(true), BlockOwnerDeletion: ptr(true),
	}}
}

// storedMeta is an object's metadata as read back from the server: what controller-runtime's Update
// sends.
func storedMeta(name string) metav1.ObjectMeta {
	return metav1.ObjectMeta{
		Name: name, Namespace: "default", UID: types.UID("0f6c2f1e-3a55-4f0e-a2c4-7e0b5a9c1d22"),
		ResourceVersion: "1042", Generation: 3, CreationTimestamp: created,
		Labels: labels(), Annotations: map[string]string{"example.com/revision": "7"},
		OwnerReferences: owner(), Finalizers: []string{"example.com/cleanup"},
		ManagedFields: []metav1.ManagedFieldsEntry{{
			Manager: "manager", Operation: metav1.ManagedFieldsOperationUpdate, APIVersion: "v1",
			Time: &later, FieldsType: "FieldsV1",
			FieldsV1: &metav1.FieldsV1{Raw: []byte(`{"f:metadata":{"f:labels":{".":{},"f:app.kubernetes.io/name":{}}}}`)},
		}},
	}
}

func podSpec() corev1.PodSpec {
	return corev1.PodSpec{
		ServiceAccountName: "db",
		SecurityContext: &corev1.PodSecurityContext{
			RunAsUser: ptr(int64(999)), RunAsNonRoot: ptr(true), FSGroup: ptr(int64(999)),
			SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
		},
		TerminationGracePeriodSeconds: ptr(int64(30)),
		InitContainers: []corev1.Container{{
			Name: "init-perms", Image: "busybox:1.36", Command: []string{"sh", "-c", "chown -R 999 /data"},
			VolumeMounts: []corev1.VolumeMount{{Name: "data", MountPath: "/data"}},
		}},
		Containers: []corev1.Container{{
			Name: "db", Image: "postgres:16.3", ImagePullPolicy: corev1.PullIfNotPresent,
			Args:  []string{"-c", "max_connections=200"},
			Ports: []corev1.ContainerPort{{Name: "pg", ContainerPort: 5432, Protocol: corev1.ProtocolTCP}},
			Env: []corev1.EnvVar{
				{Name: "PGDATA", Value: "/data/pgdata"},
				{Name: "POSTGRES_PASSWORD", ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{
					LocalObjectReference: corev1.LocalObjectReference{Name: "db1-credentials"}, Key: "password", Optional: ptr(false)}}},
				{Name: "POD_IP", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{APIVersion: "v1", FieldPath: "status.podIP"}}},
				{Name: "MEM_LIMIT", ValueFrom: &corev1.EnvVarSource{ResourceFieldRef: &corev1.ResourceFieldSelector{Resource: "limits.memory", Divisor: q("1Mi")}}},
			},
			EnvFrom: []corev1.EnvFromSource{{Prefix: "CFG_", ConfigMapRef: &corev1.ConfigMapEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: "db1-config"}}}},
			Resources: corev1.ResourceRequirements{
				Requests: corev1.ResourceList{corev1.ResourceCPU: q("0.5"), corev1.ResourceMemory: q("512Mi")},
				Limits:   corev1.ResourceList{corev1.ResourceCPU: q("2"), corev1.ResourceMemory: q("1Gi"), "ephemeral-storage": q("1e9")},
			},
			ReadinessProbe: &corev1.Probe{
				ProbeHandler:  corev1.ProbeHandler{Exec: &corev1.ExecAction{Command: []string{"pg_isready", "-U", "postgres"}}},
				PeriodSeconds: 5, FailureThreshold: 3, InitialDelaySeconds: 2,
			},
			LivenessProbe: &corev1.Probe{
				ProbeHandler:   corev1.ProbeHandler{TCPSocket: &corev1.TCPSocketAction{Port: intstr.FromString("pg")}},
				TimeoutSeconds: 1,
			},
			StartupProbe: &corev1.Probe{
				ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/healthz", Port: intstr.FromInt32(8080), Scheme: corev1.URISchemeHTTP,
					HTTPHeaders: []corev1.HTTPHeader{{Name: "X-Probe", Value: "startup"}}}},
			},
			Lifecycle: &corev1.Lifecycle{PreStop: &corev1.LifecycleHandler{Sleep: &corev1.SleepAction{Seconds: 5}}},
			VolumeMounts: []corev1.VolumeMount{
				{Name: "data", MountPath: "/data"},
				{Name: "config", MountPath: "/etc/db", ReadOnly: true},
				{Name: "tls", MountPath: "/etc/tls", ReadOnly: true, SubPath: "certs"},
			},
			SecurityContext: &corev1.SecurityContext{
				AllowPrivilegeEscalation: ptr(false), ReadOnlyRootFilesystem: ptr(true),
				Capabilities: &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
			},
			TerminationMessagePath: "/dev/termination-log", TerminationMessagePolicy: corev1.TerminationMessageReadFile,
		}},
		Volumes: []corev1.Volume{
			{Name: "config", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{
				LocalObjectReference: corev1.LocalObjectReference{Name: "db1-config"}, DefaultMode: ptr(int32(0o644)),
				Items: []corev1.KeyToPath{{Key: "postgresql.conf", Path: "postgresql.conf", Mode: ptr(int32(0o600))}}}}},
			{Name: "tls", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: "db1-tls", DefaultMode: ptr(int32(0o400))}}},
			{Name: "scratch", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{Medium: corev1.StorageMediumMemory, SizeLimit: ptr(q("64Mi"))}}},
			{Name: "token", VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{Sources: []corev1.VolumeProjection{
				{ServiceAccountToken: &corev1.ServiceAccountTokenProjection{Path: "token", ExpirationSeconds: ptr(int64(3600)), Audience: "db"}},
				{DownwardAPI: &corev1.DownwardAPIProjection{Items: []corev1.DownwardAPIVolumeFile{{Path: "labels", FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.labels"}}}}},
			}}}},
		},
		NodeSelector: map[string]string{"kubernetes.io/os": "linux"},
		Tolerations: []corev1.Toleration{
			{Key: "node.kubernetes.io/not-ready", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute, TolerationSeconds: ptr(int64(300))},
			{Key: "dedicated", Operator: corev1.TolerationOpEqual, Value: "db", Effect: corev1.TaintEffectNoSchedule},
		},
		Affinity: &corev1.Affinity{PodAntiAffinity: &corev1.PodAntiAffinity{
			PreferredDuringSchedulingIgnoredDuringExecution: []corev1.WeightedPodAffinityTerm{{Weight: 100, PodAffinityTerm: corev1.PodAffinityTerm{
				LabelSelector: &metav1.LabelSelector{MatchLabels: labels()}, TopologyKey: "kubernetes.io/hostname"}}},
		}},
		TopologySpreadConstraints: []corev1.TopologySpreadConstraint{{MaxSkew: 1, TopologyKey: "topology.kubernetes.io/zone",
			WhenUnsatisfiable: corev1.ScheduleAnyway, LabelSelector: &metav1.LabelSelector{MatchLabels: labels()}, MinDomains: ptr(int32(2))}},
		DNSPolicy: corev1.DNSClusterFirst, RestartPolicy: corev1.RestartPolicyAlways, SchedulerName: "default-scheduler",
	}
}

func objects() map[string]runtime.Object {
	return map[string]runtime.Object{
		"configmap-minimal": &corev1.ConfigMap{
			TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
			ObjectMeta: metav1.ObjectMeta{Name: "db1-config", Namespace: "default"},
			Data:       map[string]string{"postgresql.conf": "max_connections = 200\n"},
		},
		"configmap-update": &corev1.ConfigMap{
			TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
			ObjectMeta: storedMeta("db1-config"),
			Data:       map[string]string{"postgresql.conf": "max_connections = 200\n", "empty": "", "unicode": "héllo wörld ✓"},
			BinaryData: map[string][]byte{"blob": {0x00, 0xff, 0x10, 0x80}},
			Immutable:  ptr(false),
		},
		"configmap-generate-name": &corev1.ConfigMap{
			TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
			ObjectMeta: metav1.ObjectMeta{GenerateName: "db1-", Namespace: "default", Labels: labels()},
		},
		"secret-tls": &corev1.Secret{
			TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Secret"},
			ObjectMeta: metav1.ObjectMeta{Name: "db1-tls", Namespace: "default", Labels: labels(), OwnerReferences: owner()},
			Type:       corev1.SecretTypeTLS,
			Data: map[string][]byte{
				"tls.crt": []byte("-----BEGIN CERTIFICATE-----\nMIIB...\n-----END CERTIFICATE-----\n"),
				"tls.key": {0x30, 0x82, 0x01, 0x00, 0xde, 0xad, 0xbe, 0xef},
				"empty":   {},
			},
		},
		"secret-stringdata": &corev1.Secret{
			TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Secret"},
			ObjectMeta: metav1.ObjectMeta{Name: "db1-credentials", Namespace: "default"},
			StringData: map[string]string{"username": "postgres", "password": "s3cr3t"},
			Type:       corev1.SecretTypeOpaque,
			Immutable:  ptr(true),
		},
		"service": &corev1.Service{
			TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Service"},
			ObjectMeta: metav1.ObjectMeta{Name: "db1", Namespace: "default", Labels: labels(), OwnerReferences: owner()},
			Spec: corev1.ServiceSpec{
				Type: corev1.ServiceTypeClusterIP, Selector: labels(), SessionAffinity: corev1.ServiceAffinityNone,
				Ports: []corev1.ServicePort{
					{Name: "pg", Port: 5432, TargetPort: intstr.FromString("pg"), Protocol: corev1.ProtocolTCP, AppProtocol: ptr("postgresql")},
					{Name: "metrics", Port: 9187, TargetPort: intstr.FromInt32(9187)},
					{Name: "zero-target", Port: 8080},
				},
				IPFamilyPolicy: ptr(corev1.IPFamilyPolicySingleStack), IPFamilies: []corev1.IPFamily{corev1.IPv4Protocol},
				InternalTrafficPolicy: ptr(corev1.ServiceInternalTrafficPolicyCluster),
			},
		},
		"service-headless": &corev1.Service{
			TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Service"},
			ObjectMeta: metav1.ObjectMeta{Name: "db1-headless", Namespace: "default"},
			Spec: corev1.ServiceSpec{ClusterIP: corev1.ClusterIPNone, Selector: labels(), PublishNotReadyAddresses: true,
				Ports: []corev1.ServicePort{{Name: "pg", Port: 5432}}},
		},
		"statefulset": &appsv1.StatefulSet{
			TypeMeta:   metav1.TypeMeta{APIVersion: "apps/v1", Kind: "StatefulSet"},
			ObjectMeta: storedMeta("db1"),
			Spec: appsv1.StatefulSetSpec{
				Replicas: ptr(int32(3)),
				Selector: &metav1.LabelSelector{MatchLabels: labels(), MatchExpressions: []metav1.LabelSelectorRequirement{
					{Key: "tier", Operator: metav1.LabelSelectorOpIn, Values: []string{"db", "cache"}}}},
				ServiceName:         "db1-headless",
				PodManagementPolicy: appsv1.ParallelPodManagement,
				Template:            corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels()}, Spec: podSpec()},
				UpdateStrategy: appsv1.StatefulSetUpdateStrategy{Type: appsv1.RollingUpdateStatefulSetStrategyType,
					RollingUpdate: &appsv1.RollingUpdateStatefulSetStrategy{Partition: ptr(int32(0)), MaxUnavailable: ptr(intstr.FromString("50%"))}},
				VolumeClaimTemplates: []corev1.PersistentVolumeClaim{{
					ObjectMeta: metav1.ObjectMeta{Name: "data", Labels: labels()},
					Spec: corev1.PersistentVolumeClaimSpec{
						AccessModes:      []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
						StorageClassName: ptr("standard"),
						Resources:        corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: q("10Gi")}},
						VolumeMode:       ptr(corev1.PersistentVolumeFilesystem),
					},
				}},
				RevisionHistoryLimit: ptr(int32(10)),
				MinReadySeconds:      5,
				PersistentVolumeClaimRetentionPolicy: &appsv1.StatefulSetPersistentVolumeClaimRetentionPolicy{
					WhenDeleted: appsv1.DeletePersistentVolumeClaimRetentionPolicyType, WhenScaled: appsv1.RetainPersistentVolumeClaimRetentionPolicyType},
				Ordinals: &appsv1.StatefulSetOrdinals{Start: 0},
			},
			Status: appsv1.StatefulSetStatus{ObservedGeneration: 2, Replicas: 3, ReadyReplicas: 2, CurrentRevision: "db1-6d4b8c9f7", UpdateRevision: "db1-6d4b8c9f7",
				CollisionCount: ptr(int32(0)), AvailableReplicas: 2,
				Conditions: []appsv1.StatefulSetCondition{{Type: "Ready", Status: corev1.ConditionFalse, Reason: "Scaling", LastTransitionTime: later}}},
		},
		"statefulset-minimal": &appsv1.StatefulSet{
			TypeMeta:   metav1.TypeMeta{APIVersion: "apps/v1", Kind: "StatefulSet"},
			ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default"},
			Spec: appsv1.StatefulSetSpec{
				Selector:    &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}},
				ServiceName: "web",
				Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "web"}},
					Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "web", Image: "nginx:1.27"}}}},
			},
		},
		"deployment": &appsv1.Deployment{
			TypeMeta:   metav1.TypeMeta{APIVersion: "apps/v1", Kind: "Deployment"},
			ObjectMeta: metav1.ObjectMeta{Name: "api", Namespace: "default", Labels: labels()},
			Spec: appsv1.DeploymentSpec{
				Replicas: ptr(int32(0)), Selector: &metav1.LabelSelector{MatchLabels: labels()},
				Strategy: appsv1.DeploymentStrategy{Type: appsv1.RollingUpdateDeploymentStrategyType, RollingUpdate: &appsv1.RollingUpdateDeployment{
					MaxSurge: ptr(intstr.FromString("25%")), MaxUnavailable: ptr(intstr.FromInt32(1))}},
				Template:                corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels(), Annotations: map[string]string{"kubectl.kubernetes.io/restartedAt": "2024-05-17T09:30:12Z"}}, Spec: podSpec()},
				ProgressDeadlineSeconds: ptr(int32(600)),
			},
		},
		"pod": &corev1.Pod{
			TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
			ObjectMeta: metav1.ObjectMeta{Name: "db1-0", Namespace: "default", Labels: labels(), DeletionTimestamp: &later, DeletionGracePeriodSeconds: ptr(int64(0))},
			Spec:       podSpec(),
			Status: corev1.PodStatus{
				Phase: corev1.PodRunning, PodIP: "10.244.0.12", PodIPs: []corev1.PodIP{{IP: "10.244.0.12"}}, HostIP: "172.18.0.2",
				StartTime: &created, QOSClass: corev1.PodQOSBurstable,
				Conditions: []corev1.PodCondition{
					{Type: corev1.PodReady, Status: corev1.ConditionTrue, LastTransitionTime: later},
					{Type: corev1.PodScheduled, Status: corev1.ConditionTrue},
				},
				ContainerStatuses: []corev1.ContainerStatus{{
					Name: "db", Ready: true, RestartCount: 2, Image: "postgres:16.3", ImageID: "docker.io/library/postgres@sha256:0123", ContainerID: "containerd://abc",
					Started:              ptr(true),
					State:                corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: later}},
					LastTerminationState: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: -1, Signal: 9, Reason: "OOMKilled", StartedAt: created, FinishedAt: later}},
					AllocatedResources:   corev1.ResourceList{corev1.ResourceCPU: q("500m")},
				}},
			},
		},
		"pvc": &corev1.PersistentVolumeClaim{
			TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "PersistentVolumeClaim"},
			ObjectMeta: metav1.ObjectMeta{Name: "data-db1-0", Namespace: "default", Labels: labels(), Finalizers: []string{"kubernetes.io/pvc-protection"}},
			Spec: corev1.PersistentVolumeClaimSpec{
				AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
				Resources:   corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: q("20Gi")}},
				Selector:    &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "zone", Operator: metav1.LabelSelectorOpExists}}},
				VolumeName:  "pv-0001",
			},
			Status: corev1.PersistentVolumeClaimStatus{Phase: corev1.ClaimBound, Capacity: corev1.ResourceList{corev1.ResourceStorage: q("20Gi")},
				AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce}},
		},
		"lease": &coordinationv1.Lease{
			TypeMeta:   metav1.TypeMeta{APIVersion: "coordination.k8s.io/v1", Kind: "Lease"},
			ObjectMeta: metav1.ObjectMeta{Name: "db-operator-leader", Namespace: "default"},
			Spec: coordinationv1.LeaseSpec{HolderIdentity: ptr("manager-7c9d_1b2e3f"), LeaseDurationSeconds: ptr(int32(15)),
				AcquireTime: &metav1.MicroTime{Time: created.Time}, RenewTime: &renewTime, LeaseTransitions: ptr(int32(4))},
		},
		"lease-released": &coordinationv1.Lease{
			TypeMeta:   metav1.TypeMeta{APIVersion: "coordination.k8s.io/v1", Kind: "Lease"},
			ObjectMeta: metav1.ObjectMeta{Name: "db-operator-leader", Namespace: "default", ResourceVersion: "77"},
			Spec:       coordinationv1.LeaseSpec{HolderIdentity: ptr(""), LeaseDurationSeconds: ptr(int32(1)), LeaseTransitions: ptr(int32(0))},
		},
		"event-core": &corev1.Event{
			TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Event"},
			ObjectMeta: metav1.ObjectMeta{Name: "db1.17d0a9c1b2c3d4e5", Namespace: "default"},
			InvolvedObject: corev1.ObjectReference{Kind: "Database", Namespace: "default", Name: "db1", UID: "5b3c1a4e-8f1c-4a5e-9d57-1c2b3a4d5e6f",
				APIVersion: "example.com/v1", ResourceVersion: "1041"},
			Reason: "Created", Message: "created StatefulSet db1", Type: corev1.EventTypeNormal,
			Source:         corev1.EventSource{Component: "db-operator"},
			FirstTimestamp: created, LastTimestamp: later, Count: 2,
			ReportingController: "example.com/db-operator", ReportingInstance: "db-operator-7c9d",
		},
		"event-events-v1": &eventsv1.Event{
			TypeMeta:            metav1.TypeMeta{APIVersion: "events.k8s.io/v1", Kind: "Event"},
			ObjectMeta:          metav1.ObjectMeta{Name: "db1.17d0a9c1b2c3d4e6", Namespace: "default"},
			EventTime:           renewTime,
			Series:              &eventsv1.EventSeries{Count: 3, LastObservedTime: metav1.NewMicroTime(time.Date(2024, 5, 17, 9, 32, 0, 999, time.UTC))},
			ReportingController: "example.com/db-operator", ReportingInstance: "db-operator-7c9d",
			Action: "Scale", Reason: "Scaled", Note: "scaled to 3", Type: "Normal",
			Regarding: corev1.ObjectReference{Kind: "StatefulSet", Namespace: "default", Name: "db1", APIVersion: "apps/v1"},
		},
		"job": &batchv1.Job{
			TypeMeta:   metav1.TypeMeta{APIVersion: "batch/v1", Kind: "Job"},
			ObjectMeta: metav1.ObjectMeta{Name: "db1-backup", Namespace: "default", OwnerReferences: owner()},
			Spec: batchv1.JobSpec{
				BackoffLimit: ptr(int32(0)), Completions: ptr(int32(1)), Parallelism: ptr(int32(1)), TTLSecondsAfterFinished: ptr(int32(3600)),
				ActiveDeadlineSeconds: ptr(int64(900)), CompletionMode: ptr(batchv1.NonIndexedCompletion), Suspend: ptr(false),
				PodFailurePolicy: &batchv1.PodFailurePolicy{Rules: []batchv1.PodFailurePolicyRule{{Action: batchv1.PodFailurePolicyActionFailJob,
					OnExitCodes: &batchv1.PodFailurePolicyOnExitCodesRequirement{Operator: batchv1.PodFailurePolicyOnExitCodesOpIn, Values: []int32{42, -3}}}}},
				Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{RestartPolicy: corev1.RestartPolicyNever,
					Containers: []corev1.Container{{Name: "backup", Image: "postgres:16.3", Command: []string{"pg_dumpall"}}}}},
			},
		},
		"cronjob": &batchv1.CronJob{
			TypeMeta:   metav1.TypeMeta{APIVersion: "batch/v1", Kind: "CronJob"},
			ObjectMeta: metav1.ObjectMeta{Name: "db1-nightly", Namespace: "default"},
			Spec: batchv1.CronJobSpec{Schedule: "0 3 * * *", TimeZone: ptr("Etc/UTC"), ConcurrencyPolicy: batchv1.ForbidConcurrent,
				SuccessfulJobsHistoryLimit: ptr(int32(3)), StartingDeadlineSeconds: ptr(int64(120)),
				JobTemplate: batchv1.JobTemplateSpec{Spec: batchv1.JobSpec{Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{RestartPolicy: corev1.RestartPolicyOnFailure,
					Containers: []corev1.Container{{Name: "backup", Image: "postgres:16.3"}}}}}}},
			Status: batchv1.CronJobStatus{LastScheduleTime: &later, Active: []corev1.ObjectReference{{Kind: "Job", Name: "db1-nightly-28601234"}}},
		},
		"pdb": &policyv1.PodDisruptionBudget{
			TypeMeta:   metav1.TypeMeta{APIVersion: "policy/v1", Kind: "PodDisruptionBudget"},
			ObjectMeta: metav1.ObjectMeta{Name: "db1", Namespace: "default"},
			Spec: policyv1.PodDisruptionBudgetSpec{MinAvailable: ptr(intstr.FromInt32(2)), Selector: &metav1.LabelSelector{MatchLabels: labels()},
				UnhealthyPodEvictionPolicy: ptr(policyv1.AlwaysAllow)},
		},
		"role": &rbacv1.Role{
			TypeMeta:   metav1.TypeMeta{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "Role"},
			ObjectMeta: metav1.ObjectMeta{Name: "db1", Namespace: "default"},
			Rules: []rbacv1.PolicyRule{
				{APIGroups: []string{""}, Resources: []string{"configmaps", "secrets"}, Verbs: []string{"get", "list", "watch"}},
				{APIGroups: []string{"coordination.k8s.io"}, Resources: []string{"leases"}, ResourceNames: []string{"db1"}, Verbs: []string{"*"}},
			},
		},
		"rolebinding": &rbacv1.RoleBinding{
			TypeMeta:   metav1.TypeMeta{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "RoleBinding"},
			ObjectMeta: metav1.ObjectMeta{Name: "db1", Namespace: "default"},
			Subjects:   []rbacv1.Subject{{Kind: "ServiceAccount", Name: "db", Namespace: "default"}},
			RoleRef:    rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "Role", Name: "db1"},
		},
		"clusterrole-aggregated": &rbacv1.ClusterRole{
			TypeMeta:        metav1.TypeMeta{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "ClusterRole"},
			ObjectMeta:      metav1.ObjectMeta{Name: "db-admin"},
			AggregationRule: &rbacv1.AggregationRule{ClusterRoleSelectors: []metav1.LabelSelector{{MatchLabels: map[string]string{"example.com/aggregate-to-db-admin": "true"}}}},
		},
		"serviceaccount": &corev1.ServiceAccount{
			TypeMeta:                     metav1.TypeMeta{APIVersion: "v1", Kind: "ServiceAccount"},
			ObjectMeta:                   metav1.ObjectMeta{Name: "db", Namespace: "default"},
			ImagePullSecrets:             []corev1.LocalObjectReference{{Name: "regcred"}},
			AutomountServiceAccountToken: ptr(false),
		},
		"namespace": &corev1.Namespace{
			TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Namespace"},
			ObjectMeta: metav1.ObjectMeta{Name: "team-a", Labels: map[string]string{"team": "a"}},
		},
		"endpointslice": &discoveryv1.EndpointSlice{
			TypeMeta:    metav1.TypeMeta{APIVersion: "discovery.k8s.io/v1", Kind: "EndpointSlice"},
			ObjectMeta:  metav1.ObjectMeta{Name: "db1-abcde", Namespace: "default", Labels: map[string]string{"kubernetes.io/service-name": "db1"}},
			AddressType: discoveryv1.AddressTypeIPv4,
			Endpoints: []discoveryv1.Endpoint{{Addresses: []string{"10.244.0.12"}, Conditions: discoveryv1.EndpointConditions{Ready: ptr(true), Serving: ptr(true), Terminating: ptr(false)},
				TargetRef: &corev1.ObjectReference{Kind: "Pod", Name: "db1-0", Namespace: "default"}, NodeName: ptr("node-1")}},
			Ports: []discoveryv1.EndpointPort{{Name: ptr("pg"), Port: ptr(int32(5432)), Protocol: ptr(corev1.ProtocolTCP)}},
		},
		"ingress": &networkingv1.Ingress{
			TypeMeta:   metav1.TypeMeta{APIVersion: "networking.k8s.io/v1", Kind: "Ingress"},
			ObjectMeta: metav1.ObjectMeta{Name: "api", Namespace: "default"},
			Spec: networkingv1.IngressSpec{IngressClassName: ptr("nginx"),
				TLS: []networkingv1.IngressTLS{{Hosts: []string{"api.example.com"}, SecretName: "api-tls"}},
				Rules: []networkingv1.IngressRule{{Host: "api.example.com", IngressRuleValue: networkingv1.IngressRuleValue{HTTP: &networkingv1.HTTPIngressRuleValue{
					Paths: []networkingv1.HTTPIngressPath{{Path: "/", PathType: ptr(networkingv1.PathTypePrefix),
						Backend: networkingv1.IngressBackend{Service: &networkingv1.IngressServiceBackend{Name: "api", Port: networkingv1.ServiceBackendPort{Number: 80}}}}}}}}}},
		},
		"networkpolicy": &networkingv1.NetworkPolicy{
			TypeMeta:   metav1.TypeMeta{APIVersion: "networking.k8s.io/v1", Kind: "NetworkPolicy"},
			ObjectMeta: metav1.ObjectMeta{Name: "db1", Namespace: "default"},
			Spec: networkingv1.NetworkPolicySpec{PodSelector: metav1.LabelSelector{MatchLabels: labels()}, PolicyTypes: []networkingv1.PolicyType{networkingv1.PolicyTypeIngress},
				Ingress: []networkingv1.NetworkPolicyIngressRule{{Ports: []networkingv1.NetworkPolicyPort{{Protocol: ptr(corev1.ProtocolTCP), Port: ptr(intstr.FromInt32(5432)), EndPort: ptr(int32(5433))}},
					From: []networkingv1.NetworkPolicyPeer{{PodSelector: &metav1.LabelSelector{}}}}}},
		},
		"hpa": &autoscalingv2.HorizontalPodAutoscaler{
			TypeMeta:   metav1.TypeMeta{APIVersion: "autoscaling/v2", Kind: "HorizontalPodAutoscaler"},
			ObjectMeta: metav1.ObjectMeta{Name: "api", Namespace: "default"},
			Spec: autoscalingv2.HorizontalPodAutoscalerSpec{
				ScaleTargetRef: autoscalingv2.CrossVersionObjectReference{Kind: "Deployment", Name: "api", APIVersion: "apps/v1"},
				MinReplicas:    ptr(int32(2)), MaxReplicas: 10,
				Metrics: []autoscalingv2.MetricSpec{
					{Type: autoscalingv2.ResourceMetricSourceType, Resource: &autoscalingv2.ResourceMetricSource{Name: corev1.ResourceCPU,
						Target: autoscalingv2.MetricTarget{Type: autoscalingv2.UtilizationMetricType, AverageUtilization: ptr(int32(70))}}},
					{Type: autoscalingv2.PodsMetricSourceType, Pods: &autoscalingv2.PodsMetricSource{Metric: autoscalingv2.MetricIdentifier{Name: "qps"},
						Target: autoscalingv2.MetricTarget{Type: autoscalingv2.AverageValueMetricType, AverageValue: ptr(q("1500m"))}}},
				},
				Behavior: &autoscalingv2.HorizontalPodAutoscalerBehavior{ScaleDown: &autoscalingv2.HPAScalingRules{StabilizationWindowSeconds: ptr(int32(300)),
					Policies: []autoscalingv2.HPAScalingPolicy{{Type: autoscalingv2.PercentScalingPolicy, Value: 10, PeriodSeconds: 60}}}},
			},
		},
		"controllerrevision": &appsv1.ControllerRevision{
			TypeMeta:   metav1.TypeMeta{APIVersion: "apps/v1", Kind: "ControllerRevision"},
			ObjectMeta: metav1.ObjectMeta{Name: "db1-6d4b8c9f7", Namespace: "default", OwnerReferences: owner()},
			Data:       runtime.RawExtension{Raw: []byte(`{"spec":{"template":{"spec":{"containers":[{"name":"db","image":"postgres:16.3"}]}}}}`)},
			Revision:   2,
		},
		"deleteoptions": &metav1.DeleteOptions{
			TypeMeta:           metav1.TypeMeta{APIVersion: "v1", Kind: "DeleteOptions"},
			GracePeriodSeconds: ptr(int64(0)),
			Preconditions:      &metav1.Preconditions{UID: ptr(types.UID("0f6c2f1e-3a55-4f0e-a2c4-7e0b5a9c1d22")), ResourceVersion: ptr("1042")},
			PropagationPolicy:  ptr(metav1.DeletePropagationForeground),
			DryRun:             []string{metav1.DryRunAll},
		},
	}
}

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: protobuf-vectors OUT_DIR")
		os.Exit(2)
	}
	out := os.Args[1]
	scheme := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{
		corev1.AddToScheme, appsv1.AddToScheme, batchv1.AddToScheme, coordinationv1.AddToScheme, policyv1.AddToScheme,
		rbacv1.AddToScheme, eventsv1.AddToScheme, discoveryv1.AddToScheme, networkingv1.AddToScheme, autoscalingv2.AddToScheme,
	} {
		must(add(scheme))
	}
	metav1.AddToGroupVersion(scheme, schema.GroupVersion{Version: "v1"})
	pb := protobuf.NewSerializer(scheme, scheme)
	js := jsonserializer.NewSerializerWithOptions(jsonserializer.DefaultMetaFactory, scheme, scheme, jsonserializer.SerializerOptions{})
	must(os.MkdirAll(out, 0o755))
	for name, obj := range objects() {
		var wire bytes.Buffer
		must(pb.Encode(obj, &wire))
		// What the API server does with the body: decode it, then (here) write the JSON it stores.
		decoded, _, err := pb.Decode(wire.Bytes(), nil, nil)
		must(err)
		var stored bytes.Buffer
		must(js.Encode(decoded, &stored))
		var pretty bytes.Buffer
		must(json.Indent(&pretty, stored.Bytes(), "", "  "))
		must(os.WriteFile(filepath.Join(out, name+".pb"), wire.Bytes(), 0o644))
		must(os.WriteFile(filepath.Join(out, name+".json"), pretty.Bytes(), 0o644))
		var direct bytes.Buffer
		must(js.Encode(obj, &direct))
		if !bytes.Equal(direct.Bytes(), stored.Bytes()) {
			fmt.Fprintf(os.Stderr, "%s: the protobuf round trip changes the JSON (e.g. empty lists become null, nanoseconds drop)\n", name)
		}
	}
	fmt.Printf("wrote %d vectors to %s\n", len(objects()), out)
}

func must(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
