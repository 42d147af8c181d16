export {
  DEPLOYMENT_ENVIRONMENTS,
  type TelemetryEnv,
  TelemetryEnvSchema,
  type TelemetrySettings,
  telemetrySettings,
} from "./config.ts";
export {
  createTelemetry,
  DISABLED_TELEMETRY,
  type ExportStats,
  type Telemetry,
  type WarnLogger,
} from "./otel.ts";
