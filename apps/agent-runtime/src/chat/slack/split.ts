/**
 * Slack shows at most 4,000 characters of a message's text comfortably and truncates past
 * 40,000; answers are posted in pieces of at most this many characters.
 */
export const SLACK_TEXT_LIMIT = 4000;

/** Cuts one oversized block at the last line break, else the last space, else hard. */
function cutBlock(block: string, limit: number): string[] {
  const pieces: string[] = [];
  let rest = block;
  while (rest.length > limit) {
    const window = rest.slice(0, limit);
    let at = window.lastIndexOf("\n");
    if (at < limit / 2) at = window.lastIndexOf(" ");
    if (at < limit / 2) at = limit;
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
