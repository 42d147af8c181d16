// Text an installation sent (a problem's title and detail, a name in a table, a device code) is
// printed through here: a control character in it would reach the terminal as a command of its
// own (ESC sequences clear the screen, retitle the window, write the clipboard with OSC 52, forge
// links; a bare CR overwrites the line before it). They are shown in caret notation instead (ESC
// as ^[), as `less` and gh do, so the text stays readable and nothing in it is obeyed.

// C0 controls but tab and newline, DEL, and the C1 controls (0x9b is a CSI of its own).
// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what it finds
const CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/g;
// Tab and newline too: for one-line places (a table cell, a status).
// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what it finds
const CONTROL_ALL = /[\u0000-\u001f\u007f-\u009f]/g;

function caret(ch: string): string {
  const code = ch.charCodeAt(0);
  if (code < 0x20) return `^${String.fromCharCode(code + 0x40)}`;
  if (code === 0x7f) return "^?";
  return `\\x${code.toString(16)}`;
}

/** `text` with its control characters shown, not obeyed; tabs and newlines kept. */
export function printable(text: string): string {
  return text.replace(CONTROL, caret);
}

/** `text` as one line: tabs and newlines become spaces, other controls are shown, not obeyed. */
export function printableLine(text: string): string {
  return text.replace(/[\t\r\n]+/g, " ").replace(CONTROL_ALL, caret);
}

/**
 * `value` as indented JSON with DEL and the C1 controls escaped too (JSON.stringify escapes only
 * those below 0x20): the same JSON to a parser, nothing a terminal would obey.
 */
export function jsonText(value: unknown): string {
  return JSON.stringify(value, null, 2).replace(
    // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what it finds
    /[\u007f-\u009f]/g,
    (ch) => `\\u${ch.charCodeAt(0).toString(16).padStart(4, "0")}`,
  );
}
