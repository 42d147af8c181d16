import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { type FormEvent, useState } from "react";
import { Link, useParams } from "react-router";
import { call } from "../api/client.ts";
import { useOrgRole } from "../api/hooks.ts";
import { SelectField } from "../components/form.tsx";
import { ProjectSelect } from "../components/project-select.tsx";
import { Button, ErrorNote, Guarded, Loading, PageTitle, Table, Td, TextField } from "../components/ui.tsx";
import { parseBindingVersion } from "../lib/binding-version.ts";
import { allows } from "../lib/permissions.ts";
import { fieldErrorsOf } from "../lib/problem.ts";

/** Organization policies (Cedar) and their bindings: what is enforced or watched (dryrun), and where. */
export function PoliciesPage() {
  const { orgId } = useParams() as { orgId: string };
  const role = useOrgRole(orgId);
  const queryClient = useQueryClient();
  const manage = allows("policies:manage", { ...(role ? { org: role } : {}) });
  const policies = useQuery({
    queryKey: ["policies", orgId],
    queryFn: () => call("listOrgPolicies", { path: { orgId }, query: { limit: 100 } }),
  });
  const bindings = useQuery({
    queryKey: ["bindings", orgId],
    queryFn: () => call("listOrgPolicyBindings", { path: { orgId }, query: { limit: 100 } }),
  });
  const unbind = useMutation({
    mutationFn: (bindingId: string) => call("deleteOrgPolicyBinding", { path: { orgId, bindingId } }),
    onSuccess: () => void queryClient.invalidateQueries({ queryKey: ["bindings", orgId] }),
  });
  const names = new Map(policies.data?.items.map((p) => [p.id, p.name]));
  return (
    <>
      <PageTitle
        actions={
          <Guarded allowance={manage}>
            {(disabled) =>
              disabled ? (
                <Button disabled>New policy</Button>
              ) : (
                <Link
                  to={`/orgs/${orgId}/policies/new`}
                  className="rounded-md bg-indigo-600 px-3 py-1.5 text-sm text-white"
                >
                  New policy
                </Link>
              )
            }
          </Guarded>
        }
      >
        Policies
      </PageTitle>
      {policies.isPending ? <Loading what="policies" /> : null}
      <ErrorNote error={policies.error} retry={() => void policies.refetch()} />
      {policies.data?.items.length ? (
        <Table label="Policies" headers={["Name", "Version", "Rules", "Updated"]}>
          {policies.data.items.map((p) => (
            <tr key={p.id}>
              <Td wrap>
                <Link to={`/orgs/${orgId}/policies/${p.id}`}>{p.name}</Link>
              </Td>
              <Td>{p.version}</Td>
              <Td mono>{p.rules.map((r) => `${r.effect} ${r.id}`).join(", ")}</Td>
              <Td>{new Date(p.updatedAt).toLocaleString()}</Td>
            </tr>
          ))}
        </Table>
      ) : policies.isSuccess ? (
        <p className="text-sm">No policies yet.</p>
      ) : null}

      <h2 className="mt-8 mb-2 text-lg font-semibold">Bindings</h2>
      <ErrorNote error={bindings.error ?? unbind.error} />
      {bindings.data?.items.length ? (
        <Table label="Policy bindings" headers={["Policy", "Version", "Mode", "Target", ""]}>
          {bindings.data.items.map((b) => (
            <tr key={b.id}>
              <Td>{names.get(b.policyId) ?? b.policyId}</Td>
              <Td>{String(b.version)}</Td>
              <Td>{b.mode}</Td>
              <Td mono>{Object.keys(b.target).length ? JSON.stringify(b.target) : "the whole organization"}</Td>
              <Td>
                <Button
                  variant="danger"
                  disabled={!manage.allowed || unbind.isPending}
                  title={manage.reason}
                  aria-label={`Remove binding of ${names.get(b.policyId) ?? b.policyId}`}
                  onClick={() => unbind.mutate(b.id)}
                >
                  Remove
                </Button>
              </Td>
            </tr>
          ))}
        </Table>
      ) : bindings.isSuccess ? (
        <p className="text-sm">Nothing is bound: no policy applies yet.</p>
      ) : null}
      {manage.allowed && policies.data?.items.length ? (
        <BindForm orgId={orgId} policies={policies.data.items} />
      ) : !manage.allowed ? (
        <p className="mt-2 text-sm">Binding policies: {manage.reason}.</p>
      ) : null}
    </>
  );
}

const MODES = ["enforce", "dryrun"] as const;
const modeLabel = (mode: (typeof MODES)[number]) => (mode === "dryrun" ? "dryrun (record only)" : mode);

function BindForm({ orgId, policies }: { orgId: string; policies: { id: string; name: string }[] }) {
  const queryClient = useQueryClient();
  const policyNames = new Map(policies.map((pol) => [pol.id, pol.name]));
  const [policyId, setPolicyId] = useState(policies[0]!.id);
  const [mode, setMode] = useState<(typeof MODES)[number]>("enforce");
  const [version, setVersion] = useState("latest");
  const [projectId, setProjectId] = useState("");
  const [touched, setTouched] = useState(false);
  const parsedVersion = parseBindingVersion(version);
  const bind = useMutation({
    mutationFn: () =>
      call("createOrgPolicyBinding", {
        path: { orgId },
        body: {
          policyId,
          mode,
          version: parsedVersion.version!,
          ...(projectId ? { target: { projectIds: [projectId] } } : {}),
        },
      }),
    onSuccess: () => void queryClient.invalidateQueries({ queryKey: ["bindings", orgId] }),
  });
  const fieldError = fieldErrorsOf(bind.error);
  const submit = (e: FormEvent) => {
    e.preventDefault();
    setTouched(true);
    if (parsedVersion.error) return;
    bind.mutate();
  };
  return (
    <form
      onSubmit={submit}
      aria-label="Bind a policy"
      className="mt-4 grid max-w-3xl grid-cols-2 gap-x-4 md:grid-cols-4"
    >
      <SelectField
        label="Policy to bind"
        error={fieldError("policyId")}
        choices={policies.map((pol) => pol.id)}
        labelOf={(id) => policyNames.get(id) ?? id}
        value={policyId}
        onChange={setPolicyId}
      />
      <SelectField label="Mode" choices={MODES} labelOf={modeLabel} value={mode} onChange={setMode} />
      <TextField
        label="Version"
        error={(touched ? parsedVersion.error : undefined) ?? fieldError("version")}
        hint="latest, or a number to pin"
        value={version}
        onChange={(e) => setVersion(e.target.value)}
      />
      <ProjectSelect orgId={orgId} value={projectId} onChange={setProjectId} />
      <div className="col-span-full">
        <ErrorNote error={bind.error} />
        <Button type="submit" variant="primary" disabled={bind.isPending}>
          {bind.isPending ? "Binding…" : "Bind policy"}
        </Button>
      </div>
    </form>
  );
}
