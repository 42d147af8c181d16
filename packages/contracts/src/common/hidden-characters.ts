/**
 * Control characters and the bidirectional formatting marks (U+061C, U+200E/F, U+202A-E,
 * U+2066-9): in text shown to people (names, event types) they reorder or hide what the console,
 * the CLI and the audit trail show (`U+202E` makes "Acme‮gnp.exe" read as "Acmeexe.png").
 */
export const HIDDEN_CHARACTERS = /[\p{Cc}\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/u;
