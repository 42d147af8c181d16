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

/** The values a boolean environment variable accepts (case-insensitive, surrounding blanks ignored). */
export const ENV_BOOLEAN_VALUES = ["true", "false", "1", "0", "yes", "no", "on", "off"] as const;
const TRUE_VALUES: ReadonlySet<string> = new Set(["true", "1", "yes", "on"]);

/**
 * A boolean environment variable: `true`/`1`/`yes`/`on` → true, `false`/`0`/`no`/`off` → false.
 * Anything else (`ture`, `enabled`, `2`) stops the start naming the variable and these values,
 * never a silent false. Give a default with `.prefault("off")` (an input value, so the reference
 * shows it).
 */
export const envBoolean = z
  .string()
  .trim()
  .toLowerCase()
  .pipe(z.enum(ENV_BOOLEAN_VALUES, { error: `must be one of ${ENV_BOOLEAN_VALUES.join(", ")}` }))
  .transform((v) => TRUE_VALUES.has(v))
  .meta({ enum: [...ENV_BOOLEAN_VALUES] });

/** A 32-byte key given base64-encoded (the master key, AES-256), as its bytes. */
export const envKey32 = z.string().transform((value, ctx) => {
  const key = Buffer.from(value, "base64");
  if (key.length !== 32) ctx.addIssue({ code: "custom", message: "must be 32 bytes, base64-encoded" });
  return key;
});
