export {
  DEPLOYMENT_ENVIRONMENTS,
  type TelemetryEnv,
  TelemetryEnvSchema,
  type TelemetrySettings,
  telemetrySettings,
} from "./config.ts";
export {
  ExportCounter,
  type Exporter,
  exportHealth,
  failureKind,
  registerExporter,
} from "./export-health.ts";
export {
  annotateSpan,
  currentSpan,
  inChildSpan,
  injectTraceparent,
  inServiceSpan,
  nameRequestSpan,
  SpanKind,
  startChildSpan,
  traceFields,
  traceRequests,
  withChildSpan,
} from "./http.ts";
export {
  createTelemetry,
  DISABLED_TELEMETRY,
  type ExportStats,
  type Telemetry,
  type WarnLogger,
} from "./otel.ts";
