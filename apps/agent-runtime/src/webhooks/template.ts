export const RAW_LIMIT = 4000;

const PLACEHOLDER = /\{([A-Za-z0-9_$@-]+(?:\.[A-Za-z0-9_$@-]+)*)\}/g;

function lookup(payload: unknown, path: string): { found: boolean; value: unknown } {
  let current: unknown = payload;
  for (const segment of path.split(".")) {
    if (Array.isArray(current)) {
      if (!/^\d+$/.test(segment)) return { found: false, value: undefined };
      const index = Number(segment);
      if (index >= current.length) return { found: false, value: undefined };
      current = current[index];
    } else if (typeof current === "object" && current !== null && Object.hasOwn(current, segment)) {
      current = (current as Record<string, unknown>)[segment];
    } else {
      return { found: false, value: undefined };
    }
  }
  return { found: true, value: current };
}

export function rawPayload(payload: unknown): string {
  const text = JSON.stringify(payload, null, 2);
  return text.length > RAW_LIMIT ? `${text.slice(0, RAW_LIMIT)}\n… (truncated)` : text;
}

/**
 * Renders a prompt template against a payload (spec "Prompt templates"): `{a.b.0.c}` dot paths
 * with array indexes as segments, unresolvable paths left as written, non-string values as JSON,
 * `{__raw__}` as indented JSON cut at about 4000 characters. An empty template yields the whole
 * payload after a lead-in naming the event and the route.
 */
export function renderPrompt(template: string, payload: Record<string, unknown>, event: string, name: string): string {
  if (template.trim() === "") {
    return (
      `Webhook event "${event}" received on route /agents/webhooks/${name}. Payload:\n\n` +
      `\`\`\`json\n${JSON.stringify(payload, null, 2)}\n\`\`\``
    );
  }
  return template.replace(PLACEHOLDER, (whole, path: string) => {
    if (path === "__raw__") return rawPayload(payload);
    const { found, value } = lookup(payload, path);
    if (!found || value === undefined) return whole;
    return typeof value === "string" ? value : JSON.stringify(value);
  });
}

export function webhookLabel(name: string): string {
  return `**Webhook: ${name}**`;
}
