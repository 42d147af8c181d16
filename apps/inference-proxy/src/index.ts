export { createInferenceService, INFERENCE_SCHEMA, type InferenceService, type InferenceServiceDeps } from "./app.ts";
export {
  type CloudACredential,
  configFromEnv,
  configFromEnv as inferenceConfigFromEnv,
  configFromSettings as inferenceConfigFromSettings,
  hasProviderCredential,
  type InferenceConfig,
  type InferenceEnv,
  InferenceEnvSchema,
  type InferenceSettings,
  ProviderEnvSchema,
  type ProviderSettings,
} from "./config.ts";
