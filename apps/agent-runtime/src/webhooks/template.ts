export const RAW_LIMIT = 4000;
/**
 * Characters an empty template's pretty-printed payload may reach (twice the largest body), and
 * what a template's placeholders may insert in all. Deep
 * arrays of short items print at a hundred times their size (a 1 MiB body became 60 MB of text,
 * stored and sent with every delivery); past this, the whole payload is given as compact JSON.
 */
export const PRETTY_LIMIT = 2 * 1024 * 1024;

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

interface Frame {
  container: unknown[] | Record<string, unknown>;
  keys: string[] | undefined;
  index: number;
  indent: string;
}

/**
 * `JSON.stringify(value, null, 2)` for parsed JSON, without recursion (any depth renders) and
 * stopping once the text passes `limit` characters (a 1 MiB payload is not printed whole to keep
 * its first 4000 characters). Returns the text, cut at `limit`, and whether it was cut.
 */
export function prettyJson(value: unknown, limit = Number.POSITIVE_INFINITY): { text: string; truncated: boolean } {
  const parts: string[] = [];
  let length = 0;
  const push = (s: string) => {
    parts.push(s);
    length += s.length;
  };
  const stack: Frame[] = [];
  const write = (v: unknown, indent: string) => {
    if (Array.isArray(v)) {
      if (v.length === 0) push("[]");
      else {
        push("[");
        stack.push({ container: v, keys: undefined, index: 0, indent });
      }
    } else if (typeof v === "object" && v !== null) {
      const keys = Object.keys(v).filter((k) => (v as Record<string, unknown>)[k] !== undefined);
      if (keys.length === 0) push("{}");
      else {
        push("{");
        stack.push({ container: v as Record<string, unknown>, keys, index: 0, indent });
      }
    } else push(JSON.stringify(v) ?? "null");
  };
  write(value, "");
  while (stack.length > 0 && length <= limit) {
    const frame = stack[stack.length - 1] as Frame;
    const size = frame.keys ? frame.keys.length : (frame.container as unknown[]).length;
    if (frame.index === size) {
      push(`\n${frame.indent}${frame.keys ? "}" : "]"}`);
      stack.pop();
      continue;
    }
    const inner = `${frame.indent}  `;
    const key = frame.keys?.[frame.index];
    const item =
      key === undefined
        ? (frame.container as unknown[])[frame.index]
        : (frame.container as Record<string, unknown>)[key];
    push(`${frame.index > 0 ? "," : ""}\n${inner}${key === undefined ? "" : `${JSON.stringify(key)}: `}`);
    frame.index++;
    write(item, inner);
  }
  const text = parts.join("");
  return length > limit ? { text: text.slice(0, limit), truncated: true } : { text, truncated: false };
}

const TRUNCATED = "… (truncated)";

export function rawPayload(payload: unknown): string {
  const { text, truncated } = prettyJson(payload, RAW_LIMIT);
  return truncated ? `${text}\n${TRUNCATED}` : text;
}

/**
 * The whole payload, pretty-printed unless that passes PRETTY_LIMIT (the receiver bounds its depth),
 * for the code block of an empty template. A backtick can only be inside a JSON string, where
 * `\u0060` means the same: written so, a sender's "```" cannot close the block and go on as text
 * of the runtime's own (to the model, and in the chat that shows a deliver-only message).
 */
function wholePayload(payload: Record<string, unknown>): string {
  const pretty = prettyJson(payload, PRETTY_LIMIT);
  return (pretty.truncated ? JSON.stringify(payload) : pretty.text).replaceAll("`", "\\u0060");
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
      `\`\`\`json\n${wholePayload(payload)}\n\`\`\``
    );
  }
  // What the placeholders may insert in all: each may be the whole body, and a template may repeat one.
  let budget = PRETTY_LIMIT;
  return template.replace(PLACEHOLDER, (whole, path: string) => {
    let value: unknown;
    if (path !== "__raw__") {
      const found = lookup(payload, path);
      if (!found.found || found.value === undefined) return whole;
      value = found.value;
    }
    if (budget <= 0) return TRUNCATED;
    const text = path === "__raw__" ? rawPayload(payload) : typeof value === "string" ? value : JSON.stringify(value);
    if (text.length <= budget) {
      budget -= text.length;
      return text;
    }
    const kept = `${text.slice(0, budget)}${TRUNCATED}`;
    budget = 0;
    return kept;
  });
}

export function webhookLabel(name: string): string {
  return `**Webhook: ${name}**`;
}
