import { z } from "zod";

export class ConfigError extends Error {
  readonly variables: string[];
  constructor(variables: { name: string; message: string }[]) {
    super(`invalid configuration: ${variables.map((v) => `${v.name}: ${v.message}`).join("; ")}`);
    this.name = "ConfigError";
    this.variables = variables.map((v) => v.name);
  }
}

/** Parses environment variables with one zod schema; the error names every bad variable. */
export function parseEnv<S extends z.ZodType>(
  schema: S,
  env: Record<string, string | undefined> = process.env,
): z.infer<S> {
  // Empty strings mean "unset" for environment variables.
  const cleaned = Object.fromEntries(Object.entries(env).filter(([, v]) => v !== undefined && v !== ""));
  const result = schema.safeParse(cleaned);
  if (result.success) return result.data;
  throw new ConfigError(
    result.error.issues.map((issue) => ({ name: String(issue.path[0] ?? "(env)"), message: issue.message })),
  );
}

/**
 * `LOG_LEVEL`: pino's level names and `silent`, nothing else (an unknown level is a start error
 * naming the variable and these values, not pino's own error at the first log line).
 */
export const LogLevelSchema = z.enum(["fatal", "error", "warn", "info", "debug", "trace", "silent"]);

/** `"true"/"1"/"yes"` → true; for boolean environment variables. */
export const envBoolean = z
  .string()
  .transform((v) => ["1", "true", "yes", "on"].includes(v.toLowerCase()))
  .pipe(z.boolean());
