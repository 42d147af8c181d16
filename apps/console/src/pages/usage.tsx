import { useQuery } from "@tanstack/react-query";
import { lazy, Suspense } from "react";
import { useParams, useSearchParams } from "react-router";
import { call } from "../api/client.ts";
import { useOrgRole } from "../api/hooks.ts";
import { ErrorNote, INPUT, Loading, PageTitle, Table, Td } from "../components/ui.tsx";
import { allows } from "../lib/permissions.ts";
import { usd } from "../lib/spend.ts";
import { groupRows, readDays, usageWindow, WINDOWS } from "../lib/usage-window.ts";
import { SpendingLimitsSection } from "./spending-limits.tsx";

const CostByDayChart = lazy(() =>
  import("../components/usage-charts.tsx").then((m) => ({ default: m.CostByDayChart })),
);
const CostByGroupChart = lazy(() =>
  import("../components/usage-charts.tsx").then((m) => ({ default: m.CostByGroupChart })),
);

/** What models cost the organization: by day, model and project; and the limits on it. */
export default function UsagePage() {
  const { orgId } = useParams() as { orgId: string };
  const role = useOrgRole(orgId);
  const org = role ? { org: role } : {};
  const read = allows("usage:read", org);
  const [params, setParams] = useSearchParams();
  const days = readDays(params.get("days"));
  const window = usageWindow(days);
  const enabled = read.allowed;
  const series = useQuery({
    queryKey: ["usage", orgId, "timeseries", window.from],
    queryFn: () => call("getUsageCostTimeseries", { path: { orgId }, query: { interval: "day", ...window } }),
    enabled,
  });
  const byModel = useQuery({
    queryKey: ["usage", orgId, "model", window.from],
    queryFn: () => call("listUsageCosts", { path: { orgId }, query: { groupBy: "model", ...window } }),
    enabled,
  });
  const byProject = useQuery({
    queryKey: ["usage", orgId, "project", window.from],
    queryFn: () => call("listUsageCosts", { path: { orgId }, query: { groupBy: "project", ...window } }),
    enabled,
  });
  const projects = useQuery({
    queryKey: ["projects", orgId, "choices"],
    queryFn: () => call("listProjects", { path: { orgId }, query: { limit: 200 } }),
  });
  const names = Object.fromEntries((projects.data?.items ?? []).map((p) => [p.id, p.name]));
  const total = byModel.data?.total;
  return (
    <>
      <PageTitle
        actions={
          <label className="flex items-center gap-2 text-sm">
            Window
            <select className={INPUT} value={days} onChange={(e) => setParams({ days: e.target.value })}>
              {WINDOWS.map((d) => (
                <option key={d} value={d}>
                  Last {d} days
                </option>
              ))}
            </select>
          </label>
        }
      >
        Usage and spend
      </PageTitle>
      {role && !read.allowed ? (
        <p role="note" className="mb-4 text-sm">
          Usage costs: {read.reason}
        </p>
      ) : null}
      {read.allowed ? (
        <>
          <ErrorNote error={series.error ?? byModel.error ?? byProject.error} retry={() => void series.refetch()} />
          {total ? (
            <p className="mb-3 text-sm" data-testid="usage-total">
              {usd(total.costUsd)} over {total.requests} requests ({total.inputTokens} input and {total.outputTokens}{" "}
              output tokens)
              {total.fallbackPricedRequests ? `; ${total.fallbackPricedRequests} priced at the fallback rate` : ""}
            </p>
          ) : null}
          <h2 className="mb-2 text-lg font-semibold">Cost by day</h2>
          <Suspense fallback={<Loading what="the chart" />}>
            {series.data ? (
              <CostByDayChart
                points={series.data.buckets.map((b) => ({
                  day: b.start.slice(5, 10),
                  costUsd: b.costUsd,
                  requests: b.requests,
                }))}
              />
            ) : (
              <Loading what="costs by day" />
            )}
          </Suspense>
          <div className="mt-6 grid gap-6 lg:grid-cols-2">
            {(
              [
                ["Cost by model", "Model", "chart-by-model", byModel.data, {}],
                ["Cost by project", "Project", "chart-by-project", byProject.data, names],
              ] as const
            ).map(([label, group, testId, data, labels]) => (
              <section key={testId} aria-label={label}>
                <h2 className="mb-2 text-lg font-semibold">{label}</h2>
                {data ? (
                  data.groups.length ? (
                    <>
                      <Suspense fallback={<Loading what="the chart" />}>
                        <CostByGroupChart label={label} testId={testId} rows={groupRows(data.groups, labels)} />
                      </Suspense>
                      <Table label={label} headers={[group, "Requests", "Cost"]}>
                        {groupRows(data.groups, labels).map((r) => (
                          <tr key={r.label}>
                            <Td mono>{r.label}</Td>
                            <Td>{r.requests}</Td>
                            <Td>{usd(r.costUsd)}</Td>
                          </tr>
                        ))}
                      </Table>
                    </>
                  ) : (
                    <p className="text-sm">No model usage in this window.</p>
                  )
                ) : (
                  <Loading what={label.toLowerCase()} />
                )}
              </section>
            ))}
          </div>
        </>
      ) : null}
      <SpendingLimitsSection orgId={orgId} org={org} projectNames={names} />
    </>
  );
}
