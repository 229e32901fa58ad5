/**
 * When the simulated kubelets (src/cluster/sim/pod-lifecycle.ts) report a started pod ready, as
 * kperturb.yaml's `cluster.podReadiness` chooses: 'immediate' at Running (the default: fast), or
 * 'probe' after the longest initialDelaySeconds of its containers' readiness probes, as a kubelet
 * first probes then (the probe taken to succeed).
 */
export const POD_READINESS = ['immediate', 'probe'] as const;
export type PodReadiness = (typeof POD_READINESS)[number];
