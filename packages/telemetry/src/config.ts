import { z } from "zod";

export const DEPLOYMENT_ENVIRONMENTS = ["production", "staging", "development"] as const;

/**
 * The telemetry variables every deployable reads. An endpoint that is not a URL and an
 * environment outside the three values stop the start, naming the variable.
 */
export const TelemetryEnvSchema = z.object({
  OTEL_EXPORTER_OTLP_ENDPOINT: z.url({ protocol: /^https?$/ }).optional(),
  OTEL_EXPORTER_OTLP_API_KEY: z.string().min(1).optional(),
  DEPLOYMENT_ENVIRONMENT: z.enum(DEPLOYMENT_ENVIRONMENTS).default("production"),
});
export type TelemetryEnv = z.infer<typeof TelemetryEnvSchema>;

export interface TelemetrySettings {
  /** The collector's base URL; export is off when unset. */
  endpoint?: string | undefined;
  /** Sent as `x-api-key`. */
  apiKey?: string | undefined;
  environment: (typeof DEPLOYMENT_ENVIRONMENTS)[number];
  serviceName: string;
  serviceVersion: string;
}

export function telemetrySettings(env: TelemetryEnv, serviceName: string, serviceVersion: string): TelemetrySettings {
  return {
    endpoint: env.OTEL_EXPORTER_OTLP_ENDPOINT,
    apiKey: env.OTEL_EXPORTER_OTLP_API_KEY,
    environment: env.DEPLOYMENT_ENVIRONMENT,
    serviceName,
    serviceVersion,
  };
}
