/**
 * The audit page's state lives in the URL: the filters and the cursor of the page shown, so back
 * and forward walk the pages and a copied link opens the same view. `trail` is the stack of the
 * cursors of the pages before (the API only pages forward).
 */
export const AUDIT_FILTERS = ["actor", "action", "targetType", "targetId", "outcome", "from", "to"] as const;
export type AuditFilter = (typeof AUDIT_FILTERS)[number];

export interface AuditView {
  filters: Partial<Record<AuditFilter, string>>;
  cursor?: string;
  /** The cursors of the previous pages, oldest first ("" for the first page). */
  trail: string[];
}

export function readAuditView(params: URLSearchParams): AuditView {
  const filters: AuditView["filters"] = {};
  for (const key of AUDIT_FILTERS) {
    const value = params.get(key);
    if (value) filters[key] = value;
  }
  const cursor = params.get("cursor") ?? undefined;
  const trail = params.get("trail")?.split(",") ?? [];
  return { filters, ...(cursor ? { cursor } : {}), trail };
}

export function writeAuditView(view: AuditView): URLSearchParams {
  const params = new URLSearchParams();
  for (const key of AUDIT_FILTERS) {
    const value = view.filters[key];
    if (value) params.set(key, value);
  }
  if (view.cursor) params.set("cursor", view.cursor);
  if (view.trail.length) params.set("trail", view.trail.join(","));
  return params;
}

export function nextPage(view: AuditView, nextCursor: string): AuditView {
  return { ...view, cursor: nextCursor, trail: [...view.trail, view.cursor ?? ""] };
}

export function previousPage(view: AuditView): AuditView {
  if (!view.trail.length) return view;
  const trail = view.trail.slice(0, -1);
  const cursor = view.trail[view.trail.length - 1];
  return { filters: view.filters, trail, ...(cursor ? { cursor } : {}) };
}

/** New filters start again at the first page. */
export function withFilters(filters: AuditView["filters"]): AuditView {
  return { filters, trail: [] };
}

/** The API's query for the view: `from`/`to` from `datetime-local` inputs become ISO instants. */
export function auditApiQuery(view: AuditView, limit: number): Record<string, string | number> {
  const query: Record<string, string | number> = { limit };
  for (const [key, value] of Object.entries(view.filters)) {
    if (!value) continue;
    query[key] = key === "from" || key === "to" ? new Date(value).toISOString() : value;
  }
  if (view.cursor) query.cursor = view.cursor;
  return query;
}
