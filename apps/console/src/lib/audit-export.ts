import { call } from "../api/client.ts";
import { type AuditView, auditApiQuery } from "./audit-query.ts";
import { auditCsvHeader, auditCsvRows } from "./csv.ts";

/** Pages of the largest size the API allows; each page becomes CSV text as it arrives. */
const EXPORT_PAGE = 500;
/** A bound on one export (about 100,000 records), so a click cannot walk an endless range. */
const MAX_PAGES = 200;

/**
 * Exports the filtered range as CSV: walked page by page (never one giant request) and written as
 * it comes, then handed to the browser as a download.
 */
export async function exportAuditCsv(orgId: string, view: AuditView, progress: (records: number) => void) {
  const chunks: string[] = [auditCsvHeader()];
  let cursor: string | undefined;
  let total = 0;
  for (let page = 0; page < MAX_PAGES; page++) {
    const query = auditApiQuery({ filters: view.filters, trail: [], ...(cursor ? { cursor } : {}) }, EXPORT_PAGE);
    const body = await call("listAuditTrail", { path: { orgId }, query });
    chunks.push(auditCsvRows(body.items));
    total += body.items.length;
    progress(total);
    if (!body.nextCursor) break;
    cursor = body.nextCursor;
  }
  const url = URL.createObjectURL(new Blob(chunks, { type: "text/csv" }));
  const link = document.createElement("a");
  link.href = url;
  link.download = `audit-${orgId}-${new Date().toISOString().slice(0, 19).replaceAll(":", "")}.csv`;
  document.body.append(link);
  link.click();
  link.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
}
