export { parseRelayEnv, RELAY_VERSION, type RelayEnv, RelayEnvSchema } from "./config.ts";
export { KubeClient } from "./kube.ts";
export * from "./protocol.ts";
export { Relay, type RelayLogger, type RelayOptions } from "./relay.ts";
export { FileTokenStore, SecretTokenStore, type TokenStore } from "./token-store.ts";
export { RequestVerifier, VerificationError } from "./verifier.ts";
