import { useQuery } from "@tanstack/react-query";
import { useState } from "react";
import { useParams } from "react-router";
import { call } from "../api/client.ts";
import { useOrgRole } from "../api/hooks.ts";
import { Button, ErrorNote, Guarded, Loading, PageTitle, Table, Td } from "../components/ui.tsx";
import { allows } from "../lib/permissions.ts";

const REASONS: Record<string, string> = {
  resource: "Would not be admitted now",
  "pinned-version": "Binding pinned to an older version",
  "egress-version": "Egress proxy on an older version",
};

/** Binding drift: what the current bindings would not admit, and what runs under older versions. */
export default function DriftPage() {
  const { orgId } = useParams() as { orgId: string };
  const role = useOrgRole(orgId);
  const read = allows("policies:manage", { ...(role ? { org: role } : {}) });
  const [refresh, setRefresh] = useState(0);
  const drift = useQuery({
    queryKey: ["drift", orgId, refresh],
    queryFn: () => call("getPolicyBindingDrift", { path: { orgId }, query: refresh ? { refresh: "true" } : {} }),
    enabled: read.allowed,
  });
  const report = drift.data;
  return (
    <>
      <PageTitle
        actions={
          <Guarded allowance={read}>
            {(disabled) => (
              <Button disabled={disabled || drift.isFetching} onClick={() => setRefresh((n) => n + 1)}>
                {drift.isFetching ? "Checking…" : "Check now"}
              </Button>
            )}
          </Guarded>
        }
      >
        Policy drift
      </PageTitle>
      {!read.allowed ? <p className="mb-3 text-sm">Reading drift: {read.reason}.</p> : null}
      {drift.isLoading ? <Loading what="the drift report" /> : null}
      <ErrorNote error={drift.error} retry={() => void drift.refetch()} />
      {report ? (
        <>
          <p className="mb-3 text-sm">
            {report.auditedAt ? `Audited ${new Date(report.auditedAt).toLocaleString()}: ` : "Not audited yet: "}
            {report.totals.entries} entries, {report.totals.resources} resources, {report.totals.pinnedBindings} pinned
            bindings
            {report.totals.egressProxies !== undefined ? `, ${report.totals.egressProxies} egress proxies` : ""}.
          </p>
          {report.items.length ? (
            <Table label="Drift" headers={["Reason", "Target", "Binding", "Policy version", "Rule", "Since"]}>
              {report.items.map((e) => (
                <tr key={`${e.reason}-${e.bindingId}-${e.target.kind}-${e.target.id}`}>
                  <Td>{REASONS[e.reason] ?? e.reason}</Td>
                  <Td mono>
                    {e.target.kind} {e.target.id}
                  </Td>
                  <Td mono>{e.bindingId}</Td>
                  <Td>
                    {e.policyId} v{e.version}
                    {e.latestVersion ? ` (latest v${e.latestVersion})` : ""}
                  </Td>
                  <Td mono>{e.ruleId ?? ""}</Td>
                  <Td>{new Date(e.since).toLocaleString()}</Td>
                </tr>
              ))}
            </Table>
          ) : (
            <p className="text-sm">No drift: everything matches the current bindings.</p>
          )}
        </>
      ) : null}
    </>
  );
}
