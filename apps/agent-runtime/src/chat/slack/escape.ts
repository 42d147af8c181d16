const ENTITIES: Record<string, string> = { "&": "&amp;", "<": "&lt;", ">": "&gt;" };

/**
 * Text as Slack must receive it to show it as written. Slack reads `<…>` in a message as a
 * mention or a link (`<!channel>` notifies everyone in a channel, `<https://evil.test|your bank>`
 * shows a link under another name) and `&…;` as an entity. What the runtime posts is text: a
 * model's answer, a webhook payload rendered into a template, a schedule's result. Any of these
 * can carry words an outsider chose, so the three characters are escaped, as Slack itself stores
 * what a person types. Plain URLs still become links; `*bold*` and other formatting still apply.
 */
export function slackText(text: string): string {
  return text.replace(/[&<>]/g, (c) => ENTITIES[c] as string);
}
