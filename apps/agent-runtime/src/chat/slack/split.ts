/**
 * Slack shows at most 4,000 characters of a message's text comfortably and truncates past
 * 40,000; answers are posted in pieces of at most this many characters.
 */
export const SLACK_TEXT_LIMIT = 4000;
/**
 * What one delivery (webhook, heartbeat, schedule) posts at most: Slack cuts a message's text
 * past this anyway. A deliver-only webhook posts what an unauthenticated sender sends, unqueued:
 * a 1 MiB body was some 260 messages in a row. The whole text stays in the stored thread.
 */
export const SLACK_DELIVERY_LIMIT = 40_000;

/** A delivery's text, cut at SLACK_DELIVERY_LIMIT with a note saying so. */
export function boundDelivery(text: string, limit = SLACK_DELIVERY_LIMIT): string {
  if (text.length <= limit) return text;
  return `${text.slice(0, limit)}\n\n_(truncated: ${text.length - limit} more characters are not shown here)_`;
}

/**
 * Where a hard cut at `limit` may fall: not inside an entity the escaping wrote (`&amp;`, `&lt;`,
 * `&gt;`: Slack would show `&l` and `t;`) nor between the two halves of a character outside the
 * BMP (an emoji would arrive as two replacement characters).
 */
function hardCut(text: string, limit: number): number {
  let at = limit;
  const amp = text.lastIndexOf("&", at - 1);
  if (amp >= 0 && at - amp < 5) {
    const end = text.indexOf(";", amp);
    if (end >= at && end - amp < 5) at = amp;
  }
  const code = text.charCodeAt(at - 1);
  if (code >= 0xd800 && code <= 0xdbff) at -= 1;
  return at > 0 ? at : limit;
}

/** Cuts one oversized block at the last line break, else the last space, else hard. */
function cutBlock(block: string, limit: number): string[] {
  const pieces: string[] = [];
  let rest = block;
  while (rest.length > limit) {
    const window = rest.slice(0, limit);
    let at = window.lastIndexOf("\n");
    if (at < limit / 2) at = window.lastIndexOf(" ");
    if (at < limit / 2) at = hardCut(rest, limit);
    pieces.push(rest.slice(0, at).trimEnd());
    rest = rest.slice(at).trimStart();
  }
  if (rest) pieces.push(rest);
  return pieces;
}

/**
 * Splits a long answer into messages on paragraph boundaries (blank lines), packing whole
 * paragraphs while they fit; only a paragraph longer than the limit is cut inside.
 */
export function splitForSlack(text: string, limit = SLACK_TEXT_LIMIT): string[] {
  const trimmed = text.trim();
  if (trimmed.length <= limit) return trimmed ? [trimmed] : [];
  const chunks: string[] = [];
  let current = "";
  for (const paragraph of trimmed.split(/\n{2,}/)) {
    const candidate = current ? `${current}\n\n${paragraph}` : paragraph;
    if (candidate.length <= limit) {
      current = candidate;
      continue;
    }
    if (current) chunks.push(current);
    current = "";
    if (paragraph.length <= limit) current = paragraph;
    else {
      const pieces = cutBlock(paragraph, limit);
      current = pieces.pop() ?? "";
      chunks.push(...pieces);
    }
  }
  if (current) chunks.push(current);
  return chunks;
}
