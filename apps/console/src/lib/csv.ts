import type { AuditRecord } from "../api/types.ts";

/** CSV of audit records, one line each; fields quoted when they hold a comma, quote or newline. */
export const AUDIT_CSV_COLUMNS = [
  "time",
  "action",
  "outcome",
  "status",
  "principalType",
  "principalId",
  "targetType",
  "targetId",
  "projectId",
  "method",
  "path",
  "requestId",
  "ip",
] as const;

export function csvField(value: unknown): string {
  if (value === undefined || value === null) return "";
  const text = String(value);
  // A leading =, +, - or @ would be a formula to a spreadsheet: prefixed so it stays text.
  const safe = /^[=+\-@]/.test(text) ? `'${text}` : text;
  return /[",\r\n]/.test(safe) ? `"${safe.replaceAll('"', '""')}"` : safe;
}

export function auditCsvHeader(): string {
  return `${AUDIT_CSV_COLUMNS.join(",")}\r\n`;
}

export function auditCsvRows(records: AuditRecord[]): string {
  return records
    .map((r) =>
      [
        r.time,
        r.action,
        r.outcome,
        r.status,
        r.principal.type,
        r.principal.id,
        r.targetType,
        r.targetId,
        r.projectId,
        r.method,
        r.path,
        r.requestId,
        r.ip,
      ]
        .map(csvField)
        .join(","),
    )
    .map((line) => `${line}\r\n`)
    .join("");
}
