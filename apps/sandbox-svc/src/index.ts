export {
  createSandboxService,
  SANDBOX_SCHEMA,
  type SandboxConfig,
  type SandboxService,
  type SandboxServiceDeps,
} from "./app.ts";
export {
  configFromEnv as sandboxConfigFromEnv,
  configFromSettings as sandboxConfigFromSettings,
  SandboxEgressHostMapSchema,
  type SandboxEnv,
  SandboxEnvSchema,
  SandboxImagesJsonSchema,
  type SandboxSettings,
  SandboxSettingsSchema,
  sandboxesRunAsOwnHostUser,
} from "./config.ts";
export { EgressEnvSchema } from "./driver/kubernetes/egress-service.ts";
export { LocalDriver, type LocalDriverOptions } from "./driver/local/local-driver.ts";
export type { SandboxDriver } from "./driver/types.ts";
export { type IngressTarget, parseIngressHost } from "./ingress.ts";
