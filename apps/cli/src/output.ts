// The output contract: a table for people on a terminal, tab-separated lines for pipes, the API's
// JSON unchanged with --json, field selection with --json a,b, and --jq through jq compiled to
// WebAssembly (no jq binary needed).
import { createRequire } from "node:module";
import { styleText } from "node:util";
import type { Io } from "./context.ts";
import { CliError } from "./exit-codes.ts";
import { jsonText, printable, printableLine } from "./printable.ts";

export interface OutputFlags {
  /** `--json` alone is `true`; `--json a,b` is the field list. */
  json?: string | boolean;
  jq?: string;
}

export interface Shape {
  /** Field names of one object (of one item for a list), from the OpenAPI document. */
  fields: readonly string[];
  list: boolean;
  /** The table's columns when the usual choice would not do. */
  columns?: string[];
  /** The answer wraps its list in an object (`items` and more); `fields` are the items'. */
  envelope?: boolean;
}

const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/;
const PREFERRED = ["id", "name", "slug", "email", "role", "state", "status", "action", "outcome", "kind", "createdAt"];
const MAX_COLUMNS = 6;
/** Fields saying a thing no longer works: shown after the others, which keep their places in pipes. */
const TRAILING = ["revokedAt"];

export function wantsJson(flags: OutputFlags): boolean {
  return Boolean(flags.json) || Boolean(flags.jq);
}

/** The columns a table shows: the usual identifying fields first, at most six, then TRAILING ones. */
export function defaultColumns(fields: readonly string[], sample: Record<string, unknown> | undefined): string[] {
  const available = fields.length > 0 ? fields : Object.keys(sample ?? {});
  const picked = PREFERRED.filter((f) => available.includes(f));
  for (const f of available) {
    if (picked.length >= MAX_COLUMNS) break;
    const value = sample?.[f];
    if (TRAILING.includes(f) || picked.includes(f)) continue;
    if (value === undefined || typeof value !== "object") picked.push(f);
  }
  return [...picked.slice(0, MAX_COLUMNS), ...TRAILING.filter((f) => available.includes(f))];
}

// Made on first use: building it loads ICU data (~10 ms), which --json and pipes never need.
let relativeFormat: Intl.RelativeTimeFormat | undefined;
export function relativeTime(iso: string, now = Date.now()): string {
  relativeFormat ??= new Intl.RelativeTimeFormat("en", { numeric: "auto" });
  const relative = relativeFormat;
  const seconds = Math.round((Date.parse(iso) - now) / 1000);
  const abs = Math.abs(seconds);
  if (abs < 60) return relative.format(seconds, "second");
  if (abs < 3600) return relative.format(Math.round(seconds / 60), "minute");
  if (abs < 86_400) return relative.format(Math.round(seconds / 3600), "hour");
  if (abs < 86_400 * 45) return relative.format(Math.round(seconds / 86_400), "day");
  return relative.format(Math.round(seconds / (86_400 * 30)), "month");
}

function cell(value: unknown, tty: boolean): string {
  if (value === undefined || value === null) return "";
  if (typeof value === "string") return tty && ISO.test(value) ? relativeTime(value) : value;
  if (typeof value === "object") return JSON.stringify(value);
  return String(value);
}

/**
 * Tabs and newlines inside a value would break a tab-separated line: they become spaces. Other
 * control characters (the server's text) are shown, not obeyed (printable.ts).
 */
const tsv = (s: string) => printableLine(s);

function selectFields(data: unknown, names: string[], shape: Shape): unknown {
  const sample = (shape.list ? (data as unknown[])[0] : data) as Record<string, unknown> | undefined;
  // An envelope's fields are chosen among its own keys: `fields` name its items'.
  const known = shape.envelope ? [] : shape.fields;
  const available = [...new Set([...known, ...Object.keys(sample ?? {})])].sort();
  const unknown = names.filter((n) => !available.includes(n));
  if (unknown.length > 0) {
    throw new CliError(
      `unknown JSON field${unknown.length > 1 ? "s" : ""} ${unknown.join(", ")}; available: ${available.join(", ")}`,
    );
  }
  const pick = (o: unknown) =>
    Object.fromEntries(names.map((n) => [n, (o as Record<string, unknown> | null)?.[n] ?? null]));
  return shape.list ? (data as unknown[]).map(pick) : pick(data);
}

let jqModule: Promise<{ raw(json: string, filter: string, flags?: string[]): string }> | undefined;
/** jq-web is a CommonJS Emscripten build, loaded only when --jq is used (it costs ~150 ms). */
function loadJq() {
  jqModule ??= createRequire(import.meta.url)("jq-web") as Promise<{
    raw(json: string, filter: string, flags?: string[]): string;
  }>;
  return jqModule;
}

export async function runJq(data: unknown, expression: string): Promise<string> {
  const jq = await loadJq();
  try {
    return jq.raw(JSON.stringify(data), expression, ["-r"]);
  } catch (error) {
    const message = String((error as Error).message ?? error)
      .split("\n")
      .find((line) => line.startsWith("jq: error"));
    // jq-web's own words around jq's: where its input came from, and a location line whose
    // expression it leaves out; the expression itself says more.
    const said = message
      ?.replace(/^jq: error:?\s*/, "")
      .replace(/^\(at inputString:\d+\):\s*/, "")
      .replace(/ \(Unix shell quoting issues\?\)/, "");
    const compile = said?.match(/^(.*) at <top-level>, line \d+:$/);
    throw new CliError(
      `--jq: ${compile ? `${compile[1]} in ${JSON.stringify(expression)}` : (said ?? "invalid expression")}`,
    );
  }
}

/** Prints a command's answer following the output contract. */
export async function printResult(io: Io, data: unknown, flags: OutputFlags, shape: Shape): Promise<void> {
  if (data === undefined) return;
  if (wantsJson(flags)) {
    let selected: unknown = data;
    if (typeof flags.json === "string") {
      selected = selectFields(
        data,
        flags.json
          .split(",")
          .map((s) => s.trim())
          .filter(Boolean),
        shape,
      );
    }
    if (flags.jq) {
      const raw = await runJq(selected, flags.jq);
      // Raw strings (jq -r) go to a pipe as they are; a terminal is shown them, never obeys them.
      const out = io.stdout.isTTY ? printable(raw) : raw;
      io.stdout.write(out.endsWith("\n") || out === "" ? out : `${out}\n`);
      return;
    }
    io.stdout.write(`${jsonText(selected)}\n`);
    return;
  }
  const tty = Boolean(io.stdout.isTTY);
  if (typeof data !== "object" || data === null) {
    // A text answer (a provider's, a proxied API's) goes to a pipe as it came; a terminal is shown it.
    io.stdout.write(`${tty ? printable(String(data)) : String(data)}\n`);
    return;
  }
  if (shape.list && Array.isArray(data)) {
    const columns = shape.columns ?? defaultColumns(shape.fields, data[0] as Record<string, unknown>);
    await printTable(io, data as Record<string, unknown>[], columns, tty);
    return;
  }
  const items = envelopeItems(data);
  if (items) {
    await printEnvelope(io, data as Record<string, unknown>, items, shape.envelope ? shape.fields : [], tty);
    return;
  }
  const series = seriesOf(data);
  if (series) {
    const { key, rows } = series;
    await printEnvelope(io, data as Record<string, unknown>, rows, [], tty, key, SERIES_LEADS);
    return;
  }
  printObject(io, data as Record<string, unknown>, tty);
}

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

/** The list inside an answer that wraps it (a Kubernetes List, a project's providers), if it is one. */
export function envelopeItems(data: unknown): Record<string, unknown>[] | undefined {
  if (!isRecord(data)) return undefined;
  const items = data.items;
  return Array.isArray(items) && items.every(isRecord) ? items : undefined;
}

/** What a series' rows lead with: the group or the bucket, then its cost. */
const SERIES_LEADS = ["key", "start", "costUsd"];

/**
 * Totals with their breakdown (`usage list`'s `groups`) or a time series (`buckets`): the one list
 * of rows in an answer that is not a list operation's, shown as a table like an envelope's items.
 */
function seriesOf(data: unknown): { key: string; rows: Record<string, unknown>[] } | undefined {
  if (!isRecord(data)) return undefined;
  const lists = Object.entries(data).filter(([, v]) => Array.isArray(v));
  if (lists.length !== 1) return undefined;
  const [key, rows] = lists[0] as [string, unknown[]];
  if (key !== "groups" && key !== "buckets") return undefined;
  return rows.every(isRecord) ? { key, rows } : undefined;
}

/** A Kubernetes List's items as kubectl shows them: namespace, name, phase, and when each was made. */
function kubernetesRows(
  envelope: Record<string, unknown>,
  items: Record<string, unknown>[],
): { rows: Record<string, unknown>[]; columns: string[] } | undefined {
  if (typeof envelope.apiVersion !== "string" || typeof envelope.kind !== "string") return undefined;
  if (!items.every((i) => isRecord(i.metadata) && typeof i.metadata.name === "string")) return undefined;
  const rows = items.map((item): Record<string, unknown> => {
    const meta = item.metadata as Record<string, unknown>;
    const status = isRecord(item.status) ? item.status : {};
    return { namespace: meta.namespace, name: meta.name, status: status.phase, createdAt: meta.creationTimestamp };
  });
  const columns = ["namespace", "name", "status", "createdAt"].filter((c) => rows.some((r) => r[c] != null));
  return { rows, columns: columns.length > 0 ? columns : ["name"] };
}

/**
 * An envelope as a table of its items. On a terminal, its other fields (a project, totals) come
 * first, as lines of their own; pipes get the rows alone. Kubernetes type markers are left out.
 */
async function printEnvelope(
  io: Io,
  envelope: Record<string, unknown>,
  items: Record<string, unknown>[],
  fields: readonly string[],
  tty: boolean,
  listKey = "items",
  leads: readonly string[] = [],
): Promise<void> {
  const kubernetes = kubernetesRows(envelope, items);
  if (tty) {
    const rest = Object.entries(envelope).filter(
      ([key, value]) =>
        key !== listKey &&
        !(kubernetes && (key === "apiVersion" || key === "kind")) &&
        value !== null &&
        value !== undefined &&
        !(isRecord(value) && Object.keys(value).length === 0),
    );
    if (rest.length > 0) {
      printObject(io, Object.fromEntries(rest), tty);
      io.stdout.write("\n");
    }
  }
  const rows = kubernetes?.rows ?? items;
  const lead = leads.filter((f) => rows[0] && f in rows[0]);
  const usual = defaultColumns(fields, rows[0]);
  const columns = lead.length ? [...lead, ...usual.filter((c) => !lead.includes(c))].slice(0, MAX_COLUMNS) : usual;
  await printTable(io, rows, kubernetes?.columns ?? columns, tty);
}

/** Kept whole at any width: what names a row (and whatever column leads the table). */
const IDENTIFYING = ["id", "name", "slug", "key", "namespace"];
/** Free text, cut short with "…" (rather than left out) when it is the last column left to give way. */
const FREE_TEXT = ["description", "summary", "title", "message", "detail", "reason", "prompt", "error"];
/** Narrower than this, a cut free-text column says too little: it is left out instead. */
const MIN_FREE_TEXT = 16;

/**
 * The columns a terminal `width` wide shows, and how wide each is (`widths`: natural, gap
 * included), as kubectl and gh do: the leading column, the identifying ones and TRAILING ones
 * stay whole, so an id can be copied; the others are left out from the right until the rest fits.
 * A free-text column that is the last one left to give way is cut to the room left instead, if
 * that leaves it MIN_FREE_TEXT characters. What the kept columns need may still be wider than the
 * terminal: they are never cut.
 */
export function fitColumns(
  columns: readonly string[],
  widths: readonly number[],
  width: number,
): Array<{ index: number; width: number }> {
  const fitted = columns.map((_, index) => ({ index, width: widths[index]! }));
  const kept = (i: number) => i === 0 || IDENTIFYING.includes(columns[i]!) || TRAILING.includes(columns[i]!);
  const total = () => fitted.reduce((sum, f) => sum + f.width, 0);
  while (total() > width) {
    const givers = fitted.filter((f) => !kept(f.index));
    const last = givers.at(-1);
    if (!last) break;
    const room = width - (total() - last.width);
    if (givers.length === 1 && FREE_TEXT.includes(columns[last.index]!) && room >= MIN_FREE_TEXT + 2) {
      last.width = room;
      break;
    }
    fitted.splice(fitted.indexOf(last), 1);
  }
  return fitted;
}

export async function printTable(
  io: Io,
  rows: Record<string, unknown>[],
  columns: string[],
  tty: boolean,
): Promise<void> {
  if (!tty) {
    for (const row of rows) io.stdout.write(`${columns.map((c) => tsv(cell(row[c], false))).join("\t")}\n`);
    return;
  }
  if (rows.length === 0) {
    io.stderr.write("No results\n");
    return;
  }
  // Natural widths (content plus a gap of two), then fitted to the terminal (see fitColumns).
  const width = io.stdout.columns || 120;
  const allHeads = columns.map((c) =>
    printableLine(c)
      .replace(/([a-z])([A-Z])/g, "$1 $2")
      .toUpperCase(),
  );
  const natural = columns.map(
    (c, i) => Math.max(allHeads[i]!.length, ...rows.map((r) => tsv(cell(r[c], true)).length)) + 2,
  );
  const fitted = fitColumns(columns, natural, width);
  const shown = fitted.map((f) => columns[f.index]!);
  const heads = fitted.map((f) => allHeads[f.index]!);
  const widths = fitted.map((f) => f.width);
  // Loaded for terminals only: pipes and --json never pay for it.
  const { default: Table } = await import("cli-table3");
  const table = new Table({
    head: heads.map((h) => styleText("bold", h, { stream: io.stdout })),
    colWidths: widths,
    chars: {
      top: "",
      "top-mid": "",
      "top-left": "",
      "top-right": "",
      bottom: "",
      "bottom-mid": "",
      "bottom-left": "",
      "bottom-right": "",
      left: "",
      "left-mid": "",
      mid: "",
      "mid-mid": "",
      right: "",
      "right-mid": "",
      middle: "",
    },
    style: { head: [], border: [], "padding-left": 0, "padding-right": 2 },
  });
  for (const row of rows) table.push(shown.map((c) => tsv(cell(row[c], true))));
  io.stdout.write(
    `${table
      .toString()
      .split("\n")
      .map((l) => l.trimEnd())
      .join("\n")}\n`,
  );
}

function printObject(io: Io, raw: Record<string, unknown>, tty: boolean): void {
  // Keys are the server's text as much as values are.
  const data = Object.fromEntries(Object.entries(raw).map(([k, v]) => [printableLine(k), v]));
  const keys = Object.keys(data);
  const pad = Math.max(0, ...keys.map((k) => k.length));
  for (const key of keys) {
    const nested = data[key];
    // On a terminal, an object of plain values (usage totals) is indented lines, not one JSON cell.
    if (tty && isRecord(nested) && Object.keys(nested).length > 0 && Object.values(nested).every(isPlain)) {
      io.stdout.write(`${styleText("bold", `${key}:`, { stream: io.stdout })}\n`);
      const inner = Math.max(...Object.keys(nested).map((k) => k.length));
      for (const [k, v] of Object.entries(nested)) {
        io.stdout.write(`  ${`${printableLine(k)}:`.padEnd(inner + 1)}  ${printableLine(cell(v, tty))}\n`);
      }
      continue;
    }
    const value = printableLine(cell(nested, tty));
    if (tty) io.stdout.write(`${styleText("bold", `${key}:`.padEnd(pad + 1), { stream: io.stdout })}  ${value}\n`);
    else io.stdout.write(`${key}\t${tsv(value)}\n`);
  }
}

const isPlain = (v: unknown) => v === null || ["string", "number", "boolean"].includes(typeof v);
