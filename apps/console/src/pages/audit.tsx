import { useQuery } from "@tanstack/react-query";
import { type FormEvent, Fragment, type ReactNode, useState } from "react";
import { useParams, useSearchParams } from "react-router";
import { call } from "../api/client.ts";
import { useOrgRole } from "../api/hooks.ts";
import type { AuditRecord } from "../api/types.ts";
import { Dialog } from "../components/dialog.tsx";
import { Button, ErrorNote, Field, INPUT, Loading, PageTitle, Table, Td, TextField } from "../components/ui.tsx";
import { exportAuditCsv } from "../lib/audit-export.ts";
import { groupAuditRecords } from "../lib/audit-groups.ts";
import {
  type AuditView,
  auditApiQuery,
  nextPage,
  previousPage,
  readAuditView,
  withFilters,
  writeAuditView,
} from "../lib/audit-query.ts";
import { allows } from "../lib/permissions.ts";

const PAGE = 50;

export function AuditPage() {
  const { orgId } = useParams() as { orgId: string };
  const role = useOrgRole(orgId);
  const [params, setParams] = useSearchParams();
  const view = readAuditView(params);
  const [selected, setSelected] = useState<AuditRecord | undefined>();
  /** The groups whose related records are shown, by their row's key. */
  const [expanded, setExpanded] = useState<ReadonlySet<string>>(new Set());
  const [exporting, setExporting] = useState<string | undefined>();
  const [exportError, setExportError] = useState<unknown>();
  const read = allows("audit:read", { ...(role ? { org: role } : {}) });
  const records = useQuery({
    queryKey: ["audit", orgId, params.toString()],
    queryFn: () => call("listAuditTrail", { path: { orgId }, query: auditApiQuery(view, PAGE) }),
    enabled: read.allowed,
  });
  const go = (next: AuditView) => setParams(writeAuditView(next));

  async function exportCsv() {
    setExportError(undefined);
    setExporting("Starting…");
    try {
      await exportAuditCsv(orgId, view, (n) => setExporting(`${n} records…`));
    } catch (err) {
      setExportError(err);
    } finally {
      setExporting(undefined);
    }
  }

  if (role && !read.allowed) {
    return (
      <>
        <PageTitle>Audit trail</PageTitle>
        <p className="text-sm">Reading the audit trail: {read.reason}.</p>
      </>
    );
  }
  const pageNumber = view.trail.length + 1;
  return (
    <>
      <PageTitle
        actions={
          <Button onClick={() => void exportCsv()} disabled={!!exporting}>
            {exporting ? `Exporting ${exporting}` : "Export CSV"}
          </Button>
        }
      >
        Audit trail
      </PageTitle>
      <Filters key={params.toString()} view={view} onApply={(filters) => go(withFilters(filters))} />
      <ErrorNote error={exportError} />
      {records.isPending ? <Loading what="audit records" /> : null}
      <ErrorNote error={records.error} retry={() => void records.refetch()} />
      {records.data ? (
        <>
          <Table label="Audit records" headers={["Time", "Actor", "Action", "Target", "Outcome", ""]}>
            {groupAuditRecords(records.data.items).map(({ record, related }) => {
              const key = `${record.time}-${record.id}`;
              const open = expanded.has(key);
              const toggle = () =>
                setExpanded((was) => {
                  const next = new Set(was);
                  if (!next.delete(key)) next.add(key);
                  return next;
                });
              return (
                <Fragment key={key}>
                  <AuditRow
                    record={record}
                    onDetails={setSelected}
                    disclosure={
                      related.length ? (
                        <button
                          type="button"
                          aria-expanded={open}
                          aria-controls={related.map((r) => rowId(r)).join(" ")}
                          aria-label={`+${related.length} related of ${record.action} at ${record.time}`}
                          onClick={toggle}
                          className="mt-1 inline-flex items-center gap-1 rounded font-sans text-xs text-indigo-700 underline-offset-2 hover:underline focus-visible:outline-2 focus-visible:outline-offset-2 focus-visible:outline-indigo-500 dark:text-indigo-300"
                        >
                          <span aria-hidden="true">{open ? "▾" : "▸"}</span>+{related.length} related
                        </button>
                      ) : null
                    }
                  />
                  {related.map((r) => (
                    <AuditRow key={`${r.time}-${r.id}`} record={r} onDetails={setSelected} groupOpen={open} />
                  ))}
                </Fragment>
              );
            })}
          </Table>
          <nav aria-label="Audit pages" className="mt-3 flex items-center gap-3">
            <Button disabled={view.trail.length === 0} onClick={() => go(previousPage(view))}>
              Previous page
            </Button>
            <span className="text-sm">Page {pageNumber}</span>
            <Button
              disabled={!records.data.nextCursor}
              onClick={() => records.data.nextCursor && go(nextPage(view, records.data.nextCursor))}
            >
              Next page
            </Button>
          </nav>
        </>
      ) : null}
      <Dialog
        open={!!selected}
        onOpenChange={(o) => (o ? undefined : setSelected(undefined))}
        title="Audit record"
        side
      >
        <pre className="overflow-x-auto rounded bg-slate-100 p-3 text-xs dark:bg-slate-800" data-testid="audit-json">
          {JSON.stringify(selected, null, 2)}
        </pre>
        <Button className="mt-3" onClick={() => setSelected(undefined)}>
          Close
        </Button>
      </Dialog>
    </>
  );
}

/** The id of a folded row, which its group's disclosure names in `aria-controls`. */
const rowId = (r: AuditRecord) => `audit-${r.id}`;

/**
 * One record. A record folded under another (`groupOpen` says whether its group is open) is
 * indented, and hidden while its group is closed.
 */
function AuditRow({
  record: r,
  onDetails,
  disclosure,
  groupOpen,
}: {
  record: AuditRecord;
  onDetails: (r: AuditRecord) => void;
  disclosure?: ReactNode;
  groupOpen?: boolean;
}) {
  const folded = groupOpen !== undefined;
  return (
    <tr
      id={folded ? rowId(r) : undefined}
      hidden={folded && !groupOpen}
      className={folded ? "bg-slate-50 dark:bg-slate-900" : undefined}
    >
      <Td>
        <time dateTime={r.time}>{new Date(r.time).toLocaleString()}</time>
      </Td>
      <Td>{r.principal.displayName ?? r.principal.id ?? r.principal.type}</Td>
      <Td mono>
        {folded ? (
          <span className="block pl-4">
            <span aria-hidden="true">↳ </span>
            <span className="sr-only">Related: </span>
            {r.action}
          </span>
        ) : (
          <>
            {r.action}
            {disclosure ? <span className="block">{disclosure}</span> : null}
          </>
        )}
      </Td>
      <Td mono wrap>
        {r.targetId ?? ""}
      </Td>
      <Td>{r.outcome}</Td>
      <Td>
        <Button onClick={() => onDetails(r)} aria-label={`Details of ${r.action} at ${r.time}`}>
          Details
        </Button>
      </Td>
    </tr>
  );
}

function Filters({ view, onApply }: { view: AuditView; onApply: (filters: AuditView["filters"]) => void }) {
  const [filters, setFilters] = useState(view.filters);
  const set = (key: keyof AuditView["filters"]) => (e: { target: { value: string } }) =>
    setFilters((f) => ({ ...f, [key]: e.target.value }));
  const submit = (e: FormEvent) => {
    e.preventDefault();
    onApply(Object.fromEntries(Object.entries(filters).filter(([, v]) => v)));
  };
  return (
    <form onSubmit={submit} aria-label="Audit filters" className="mb-4 grid grid-cols-2 gap-x-4 md:grid-cols-4">
      <TextField label="Actor" value={filters.actor ?? ""} onChange={set("actor")} />
      <TextField label="Action" value={filters.action ?? ""} onChange={set("action")} />
      <TextField label="Target id" value={filters.targetId ?? ""} onChange={set("targetId")} />
      <Field label="Outcome">
        {(p) => (
          <select {...p} className={INPUT} value={filters.outcome ?? ""} onChange={set("outcome")}>
            <option value="">Any</option>
            <option value="success">success</option>
            <option value="denied">denied</option>
            <option value="error">error</option>
          </select>
        )}
      </Field>
      <TextField label="From" type="datetime-local" value={filters.from ?? ""} onChange={set("from")} />
      <TextField label="To" type="datetime-local" value={filters.to ?? ""} onChange={set("to")} />
      <div className="flex items-end pb-3">
        <Button type="submit" variant="primary">
          Apply filters
        </Button>
      </div>
    </form>
  );
}
