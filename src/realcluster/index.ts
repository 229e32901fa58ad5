/**
 * Real clusters: building and starting a real Kubernetes control plane (etcd, kube-apiserver,
 * kube-controller-manager built from the Go modules by realcp/setup.sh), running the simulated
 * nodes/scheduler/kubelets against it, and connecting to any existing cluster by kubeconfig.
 *
 * - binaries.ts: where the binaries are (locate without building; ensure = build if needed)
 * - pki.ts: the throw-away CA, serving certificate, service-account keys and admin token
 * - component-process.ts: one component as a child process (log file, stop by pid)
 * - control-plane.ts: startRealControlPlane(): the three components on loopback, fresh data each time
 * - pool.ts: ControlPlanePool: the next plan's control plane, started while the current plan runs
 * - real-cluster.ts: RealCluster: the control plane plus the simulated kubelets (the EmbeddedCluster counterpart)
 * - existing-cluster.ts: ExistingCluster: a cluster from a kubeconfig
 * - crd-create-delay.ts: waiting out kube-apiserver's 2 s hold on creates of a just-established CRD's resources
 * - run-cleanup.ts: isolation on an existing cluster: delete what a run created, wait until it is gone
 * See realcp/README.md.
 */
export { BIN_DIR_ENV, ensureControlPlaneBinaries, locateControlPlaneBinaries, type ControlPlaneBinaries } from './binaries.js';
export {
  KUBECONFIG_CONTEXT,
  startRealControlPlane,
  type ControlPlaneStartTimes,
  type ControlPlaneStopOptions,
  type RealControlPlane,
  type RealControlPlaneOptions,
} from './control-plane.js';
export { ControlPlanePool } from './pool.js';
export { RealCluster, REAL_CLUSTER_SIMULATION, type RealClusterOptions } from './real-cluster.js';
export { ExistingCluster, proxyUpstreamFor, type ProxyUpstreamOptions } from './existing-cluster.js';
export { CRD_CREATE_DELAY_MS, crdCreateDelayEnd, waitOutCrdCreateDelay } from './crd-create-delay.js';
export { deleteRunObjects, objectsCreatedByRun, uidInventory, type CleanupReport, type RunObject } from './run-cleanup.js';
