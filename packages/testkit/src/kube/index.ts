export type { KubeletFailures } from "./kubelet.ts";
export { type Denial, FakeKubeApiServer, type FakeKubeOptions } from "./server.ts";
export { type KubeObject, matchesLabels, StatusError } from "./store.ts";
export { restrictedViolations, validateKubeObject } from "./validate.ts";
