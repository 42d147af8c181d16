import { HIDDEN_CHARACTERS } from "@agentplane/contracts/hidden-characters";

/** Control and bidirectional formatting characters, but not the line feed and tab the UI lays out. */
const UNSAFE = new RegExp(`(?![\\n\\t])${HIDDEN_CHARACTERS.source}`, "gu");

/**
 * Text from outside the terminal UI (a model's answer, a webhook payload rendered into a delivery,
 * a tool's output, a thread's title, an error's message) as it may be written to the terminal.
 * Ink writes text as it is, escape sequences included: one in a webhook payload could set the
 * terminal's title, write the clipboard (OSC 52), clear the screen or draw over earlier lines
 * (CR, cursor moves), and a bidirectional override could show text in another order than it was
 * written. Each such character is shown as U+FFFD instead, so what follows an ESC stays readable.
 */
export function terminalText(text: string): string {
  return text.replace(UNSAFE, "\uFFFD");
}
