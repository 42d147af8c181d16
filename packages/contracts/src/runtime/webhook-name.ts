// Kept free of imports: the runtime's web UI bundles it to check names as they are typed.

export const WEBHOOK_NAME_PATTERN = /^[a-z0-9][a-z0-9_-]*$/;
export const WEBHOOK_NAME_RULE = "Must match [a-z0-9][a-z0-9_-]* after lowercasing";

/** Lowercases and turns spaces into hyphens; the result must still match the slug pattern. */
export function normalizeWebhookName(raw: string): string {
  return raw.trim().toLowerCase().replace(/\s+/g, "-");
}
