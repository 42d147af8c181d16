import type { components } from "@agentplane/sdk";
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useState } from "react";
import { call } from "../api/client.ts";
import { FormDialog, SelectField } from "../components/form.tsx";
import { ProjectSelect } from "../components/project-select.tsx";
import { Button, ErrorNote, Guarded, Loading, Table, Td, TextField } from "../components/ui.tsx";
import { allows, type OrgRole } from "../lib/permissions.ts";
import { fieldErrorsOf } from "../lib/problem.ts";
import { formatThresholds, parseAmount, parseThresholds, usd, usedPercent } from "../lib/spend.ts";

type Limit = components["schemas"]["SpendingLimit"];

const STATE_STYLE: Record<string, string> = {
  ok: "bg-green-700",
  warning: "bg-amber-600",
  exceeded: "bg-red-700",
};

type Period = "monthly" | "daily";
const PERIODS: readonly Period[] = ["monthly", "daily"];
const PERIOD_LABELS: Record<Period, string> = {
  monthly: "Monthly (resets on the 1st, UTC)",
  daily: "Daily (resets at midnight UTC)",
};

/** Spending limits with their status in the current period (used, remaining, resets at), editable. */
export function SpendingLimitsSection({
  orgId,
  org,
  projectNames,
}: {
  orgId: string;
  org: { org?: OrgRole };
  projectNames: Record<string, string>;
}) {
  const queryClient = useQueryClient();
  const read = allows("spending-limits:read", org);
  const manage = allows("spending-limits:manage", org);
  const [editing, setEditing] = useState<Limit | "new" | undefined>();
  const limits = useQuery({
    queryKey: ["spending-limits", orgId],
    queryFn: () => call("listSpendingLimits", { path: { orgId } }),
    enabled: read.allowed,
  });
  const status = useQuery({
    queryKey: ["spending-limits", orgId, "status"],
    queryFn: () => call("getSpendingLimitStatus", { path: { orgId } }),
    enabled: read.allowed,
    refetchInterval: 30_000,
  });
  const remove = useMutation({
    mutationFn: (limitId: string) => call("deleteSpendingLimit", { path: { orgId, limitId } }),
    onSuccess: () => void queryClient.invalidateQueries({ queryKey: ["spending-limits", orgId] }),
  });
  const statusOf = new Map((status.data?.items ?? []).map((s) => [s.limitId, s]));
  return (
    <section aria-label="Spending limits" className="mt-8">
      <div className="mb-2 flex flex-wrap items-center justify-between gap-2">
        <h2 className="text-lg font-semibold">Spending limits</h2>
        <Guarded allowance={manage}>
          {(disabled) => (
            <Button variant="primary" disabled={disabled} onClick={() => setEditing("new")}>
              New spending limit
            </Button>
          )}
        </Guarded>
      </div>
      {!read.allowed ? (
        <p role="note" className="text-sm">
          {read.reason}
        </p>
      ) : null}
      {limits.isLoading ? <Loading what="spending limits" /> : null}
      <ErrorNote error={limits.error ?? status.error} retry={() => void limits.refetch()} />
      <ErrorNote error={remove.error} />
      {limits.data?.items.length ? (
        <Table
          label="Spending limits"
          headers={["Scope", "Limit", "Period", "Used", "Remaining", "Resets at", "Alerts at", ""]}
        >
          {limits.data.items.map((l) => {
            const s = statusOf.get(l.id);
            const scope = l.projectId ? (projectNames[l.projectId] ?? l.projectId) : "Organization";
            const used = s ? usedPercent(s) : 0;
            // Two limits of one scope (a daily and a monthly one, say) need names told apart.
            const named = `${scope} ${l.period} limit of ${usd(l.amountUsd)}`;
            return (
              <tr key={l.id}>
                <Td>{scope}</Td>
                <Td>{usd(l.amountUsd)}</Td>
                <Td>{l.period}</Td>
                <Td>
                  {s ? (
                    <div className="flex min-w-40 flex-col gap-1">
                      <span data-testid={`spent-${scope}`}>
                        {usd(s.spentUsd)}
                        {s.reservedUsd ? ` (+${usd(s.reservedUsd)} reserved)` : ""} · {s.state}
                      </span>
                      <div
                        role="progressbar"
                        aria-label={`Used of the ${named}`}
                        aria-valuemin={0}
                        aria-valuemax={100}
                        aria-valuenow={used}
                        className="h-2 w-full rounded bg-slate-200 dark:bg-slate-700"
                      >
                        <div className={`h-2 rounded ${STATE_STYLE[s.state] ?? ""}`} style={{ width: `${used}%` }} />
                      </div>
                    </div>
                  ) : (
                    "—"
                  )}
                </Td>
                <Td>{s ? usd(s.remainingUsd) : "—"}</Td>
                <Td>{s ? new Date(s.periodEnd).toLocaleString() : "—"}</Td>
                <Td>{l.alertThresholds.length ? `${formatThresholds(l.alertThresholds)} %` : "none"}</Td>
                <Td>
                  <Guarded allowance={manage}>
                    {(disabled) => (
                      <span className="flex gap-2">
                        <Button aria-label={`Edit the ${named}`} disabled={disabled} onClick={() => setEditing(l)}>
                          Edit
                        </Button>
                        <Button
                          variant="danger"
                          aria-label={`Delete the ${named}`}
                          disabled={disabled || remove.isPending}
                          onClick={() => window.confirm(`Delete the ${named}?`) && remove.mutate(l.id)}
                        >
                          Delete
                        </Button>
                      </span>
                    )}
                  </Guarded>
                </Td>
              </tr>
            );
          })}
        </Table>
      ) : limits.isSuccess ? (
        <p className="text-sm">No spending limits: model calls are not capped.</p>
      ) : null}
      {editing ? (
        <LimitForm
          key={editing === "new" ? "new" : editing.id}
          orgId={orgId}
          limit={editing === "new" ? undefined : editing}
          onClose={() => setEditing(undefined)}
        />
      ) : null}
    </section>
  );
}

function LimitForm({ orgId, limit, onClose }: { orgId: string; limit: Limit | undefined; onClose: () => void }) {
  const queryClient = useQueryClient();
  const [amount, setAmount] = useState(limit ? String(limit.amountUsd) : "");
  const [period, setPeriod] = useState<Period>(limit?.period ?? "monthly");
  const [projectId, setProjectId] = useState("");
  const [thresholds, setThresholds] = useState(limit ? formatThresholds(limit.alertThresholds) : "80");
  const parsedAmount = parseAmount(amount);
  const parsedThresholds = parseThresholds(thresholds);
  const [touched, setTouched] = useState(false);
  const save = useMutation({
    mutationFn: () => {
      const body = {
        amountUsd: parsedAmount.amount!,
        period,
        alertThresholds: parsedThresholds.thresholds!,
      };
      return limit
        ? call("updateSpendingLimit", { path: { orgId, limitId: limit.id }, body })
        : call("createSpendingLimit", { path: { orgId }, body: { ...body, ...(projectId ? { projectId } : {}) } });
    },
    onSuccess: () => {
      void queryClient.invalidateQueries({ queryKey: ["spending-limits", orgId] });
      onClose();
    },
  });
  const fieldError = fieldErrorsOf(save.error);
  const submit = () => {
    setTouched(true);
    if (parsedAmount.error || parsedThresholds.error) return;
    save.mutate();
  };
  return (
    <FormDialog
      onOpenChange={(o) => (o ? undefined : onClose())}
      title={limit ? "Edit spending limit" : "New spending limit"}
      submission={save}
      onSubmit={submit}
      submitLabel={limit ? "Save limit" : "Create limit"}
      pendingLabel="Saving…"
      noValidate
    >
      <TextField
        label="Amount (USD)"
        inputMode="decimal"
        error={(touched ? parsedAmount.error : undefined) ?? fieldError("amountUsd")}
        value={amount}
        onChange={(e) => setAmount(e.target.value)}
      />
      <SelectField
        label="Period"
        error={fieldError("period")}
        choices={PERIODS}
        labelOf={(p) => PERIOD_LABELS[p]}
        value={period}
        onChange={setPeriod}
      />
      {limit ? null : (
        <ProjectSelect
          orgId={orgId}
          value={projectId}
          onChange={setProjectId}
          error={fieldError("projectId")}
          hint="Empty: the whole organization"
        />
      )}
      <TextField
        label="Alert at (% of the amount)"
        hint="Each crossing is recorded in the audit trail"
        error={(touched ? parsedThresholds.error : undefined) ?? fieldError("alertThresholds")}
        value={thresholds}
        onChange={(e) => setThresholds(e.target.value)}
      />
    </FormDialog>
  );
}
