import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { type FormEvent, lazy, Suspense, useEffect, useState } from "react";
import { Link, useNavigate, useParams } from "react-router";
import { call } from "../api/client.ts";
import { useOrgRole } from "../api/hooks.ts";
import { PrincipalName } from "../components/principal-name.tsx";
import { Button, ErrorNote, Loading, PageTitle, Table, Td, TextField } from "../components/ui.tsx";
import { cedarErrors } from "../lib/cedar-errors.ts";
import { allows } from "../lib/permissions.ts";
import { ApiError } from "../lib/problem.ts";

const CedarEditor = lazy(() => import("../components/cedar-editor.tsx"));

const TEMPLATE = `// Rules are Cedar statements; @id names the rule in decisions and the audit trail.
@id("no-exec")
forbid(principal, action == Action::"sandbox:exec", resource);
`;

/** A new policy, or a policy's next version: the API validates the Cedar and locates its errors. */
export default function PolicyEditorPage() {
  const { orgId, policyId } = useParams() as { orgId: string; policyId?: string };
  const role = useOrgRole(orgId);
  const navigate = useNavigate();
  const queryClient = useQueryClient();
  const manage = allows("policies:manage", { ...(role ? { org: role } : {}) });
  const existing = useQuery({
    queryKey: ["policy", orgId, policyId],
    queryFn: () => call("getOrgPolicy", { path: { orgId, policyId: policyId! } }),
    enabled: !!policyId,
  });
  const versions = useQuery({
    queryKey: ["policy-versions", orgId, policyId],
    queryFn: () => call("listOrgPolicyVersions", { path: { orgId, policyId: policyId! } }),
    enabled: !!policyId,
  });
  const [name, setName] = useState("");
  const [cedar, setCedar] = useState<string | undefined>(policyId ? undefined : TEMPLATE);
  const [reason, setReason] = useState("");
  useEffect(() => {
    if (existing.data) {
      setName(existing.data.name);
      setCedar(existing.data.cedar);
    }
  }, [existing.data]);

  const save = useMutation({
    mutationFn: async () => {
      if (policyId) {
        return call("updateOrgPolicy", {
          path: { orgId, policyId },
          body: { name, cedar: cedar ?? "", ...(reason ? { reason } : {}) },
        });
      }
      return call("createOrgPolicy", { path: { orgId }, body: { name, cedar: cedar ?? "" } });
    },
    onSuccess: (policy) => {
      void queryClient.invalidateQueries({ queryKey: ["policies", orgId] });
      void queryClient.invalidateQueries({ queryKey: ["policy-versions", orgId, policy.id] });
      if (!policyId) navigate(`/orgs/${orgId}/policies/${policy.id}`, { replace: true });
    },
  });
  const errors =
    save.error instanceof ApiError
      ? cedarErrors(save.error.problem.errors?.filter((e) => e.pointer.startsWith("/body/cedar")))
      : [];
  const submit = (e: FormEvent) => {
    e.preventDefault();
    save.mutate();
  };
  if (policyId && existing.isPending) return <Loading what="the policy" />;
  return (
    <>
      <PageTitle>{policyId ? `Policy ${existing.data?.name ?? ""}` : "New policy"}</PageTitle>
      <p className="mb-3 text-sm">
        <Link to={`/orgs/${orgId}/policies`}>All policies and bindings</Link>
      </p>
      <ErrorNote error={existing.error} />
      {!manage.allowed && manage.reason ? <p className="mb-3 text-sm">Changing policies: {manage.reason}.</p> : null}
      <form onSubmit={submit} className="max-w-3xl">
        <TextField
          label="Policy name"
          error={save.error instanceof ApiError ? save.error.fieldError("name") : undefined}
          required
          maxLength={100}
          value={name}
          onChange={(e) => setName(e.target.value)}
        />
        <span className="text-sm font-medium">Cedar</span>
        {cedar !== undefined ? (
          <Suspense fallback={<Loading what="the editor" />}>
            <CedarEditor value={cedar} onChange={setCedar} errors={errors} label="Cedar policy" />
          </Suspense>
        ) : null}
        {policyId ? (
          <TextField
            label="Reason for this version"
            maxLength={1000}
            value={reason}
            onChange={(e) => setReason(e.target.value)}
          />
        ) : null}
        <ErrorNote error={errors.length ? undefined : save.error} />
        {save.isSuccess ? (
          <p role="status" className="my-2 text-sm">
            Saved as version {save.data.version}.
          </p>
        ) : null}
        <Button type="submit" variant="primary" className="mt-3" disabled={!manage.allowed || save.isPending}>
          {save.isPending ? "Saving…" : "Save policy"}
        </Button>
      </form>
      {versions.data?.items.length ? (
        <section className="mt-8 max-w-3xl" aria-labelledby="versions">
          <h2 id="versions" className="mb-2 font-semibold">
            Versions
          </h2>
          <Table label="Policy versions" headers={["Version", "Author", "Reason", "Created"]}>
            {versions.data.items.map((v) => (
              <tr key={v.version}>
                <Td>{v.version}</Td>
                <Td>
                  <PrincipalName principal={{ id: v.author }} orgId={orgId} />
                </Td>
                <Td>{v.reason ?? ""}</Td>
                <Td>{new Date(v.createdAt).toLocaleString()}</Td>
              </tr>
            ))}
          </Table>
        </section>
      ) : null}
    </>
  );
}
