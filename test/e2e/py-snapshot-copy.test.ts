/**
 * py-snapshot-copy (Python, the official kubernetes client, unmodified: load_kube_config, list then
 * Watch().stream, 410 relists, 409 retries): the snapshot-copy error-path bug in Python. Its watches
 * ask for `watch=True&allowWatchBookmarks=True` (Python's spelling of a boolean), which kperturb must
 * read as kube-apiserver does (a watch) for the operator to learn at all. A generated error-path plan
 * that loses the create's answer makes the buggy operator create a second copy (the named
 * duplicate-children alarm on the copies' family); the fixed twin (it lists its copies from the API
 * server before creating) passes every plan. Skipped, with the reason, without python3-kubernetes.
 */
import { declareExampleTests } from './_campaign.js';

declareExampleTests({
  example: 'py-snapshot-copy',
  python: true,
  pattern: 'error-path',
  damaged: ['ConfigMap/default/s1-*'],
  prefer: /lost response/,
  catchingPlan: /lost response .* creates ConfigMap\/default\/s1-\*#1/,
});
