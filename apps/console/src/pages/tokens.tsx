import { useInfiniteQuery, useMutation, useQueryClient } from "@tanstack/react-query";
import { useState } from "react";
import { useParams } from "react-router";
import { call } from "../api/client.ts";
import { useOrgRole } from "../api/hooks.ts";
import type { ApiToken } from "../api/types.ts";
import { FormDialog, RoleField } from "../components/form.tsx";
import { ProjectSelect } from "../components/project-select.tsx";
import { SecretValue } from "../components/secret-dialog.tsx";
import {
  Button,
  ErrorNote,
  Field,
  Guarded,
  INPUT,
  Loading,
  PageTitle,
  Table,
  Td,
  TextField,
} from "../components/ui.tsx";
import { parseExpiry } from "../lib/expiry.ts";
import { allows, grantableRoles, type OrgRole } from "../lib/permissions.ts";
import { fieldErrorsOf } from "../lib/problem.ts";

const PAGE = 50;

export function TokensPage() {
  const { orgId } = useParams() as { orgId: string };
  const role = useOrgRole(orgId);
  const queryClient = useQueryClient();
  const [creating, setCreating] = useState(false);
  const manage = allows("api-tokens:manage", { ...(role ? { org: role } : {}) });
  const tokens = useInfiniteQuery({
    queryKey: ["api-tokens", orgId],
    queryFn: ({ pageParam }) => call("listApiTokens", { path: { orgId }, query: { limit: PAGE, cursor: pageParam } }),
    initialPageParam: undefined as string | undefined,
    getNextPageParam: (last) => last.nextCursor,
    enabled: manage.allowed,
  });
  const revoke = useMutation({
    mutationFn: (id: string) => call("revokeApiToken", { path: { tokenId: id } }),
    onSuccess: () => void queryClient.invalidateQueries({ queryKey: ["api-tokens", orgId] }),
  });
  const rows = tokens.data?.pages.flatMap((p) => p.items) ?? [];
  return (
    <>
      <PageTitle
        actions={
          <Guarded allowance={manage}>
            {(disabled) => (
              <Button variant="primary" disabled={disabled} onClick={() => setCreating(true)}>
                New API token
              </Button>
            )}
          </Guarded>
        }
      >
        API tokens
      </PageTitle>
      {tokens.isLoading ? <Loading what="tokens" /> : null}
      <ErrorNote error={tokens.error ?? revoke.error} retry={() => void tokens.refetch()} />
      {rows.length ? (
        <Table label="API tokens" headers={["Name", "Prefix", "Role", "Project", "Expires", "Last used", ""]}>
          {rows.map((t) => (
            <tr key={t.id}>
              <Td>{t.name}</Td>
              <Td mono>{t.prefix}…</Td>
              <Td>{t.role}</Td>
              <Td mono>{t.projectId ?? "all"}</Td>
              <Td>{t.expiresAt ? new Date(t.expiresAt).toLocaleDateString() : "never"}</Td>
              <Td>{t.lastUsedAt ? new Date(t.lastUsedAt).toLocaleString() : "never"}</Td>
              <Td>
                {t.revokedAt ? (
                  "revoked"
                ) : (
                  <Button
                    variant="danger"
                    aria-label={`Revoke ${t.name}`}
                    disabled={revoke.isPending}
                    onClick={() => {
                      if (window.confirm(`Revoke the token "${t.name}"? Clients using it stop working at once.`)) {
                        revoke.mutate(t.id);
                      }
                    }}
                  >
                    Revoke
                  </Button>
                )}
              </Td>
            </tr>
          ))}
        </Table>
      ) : tokens.isSuccess ? (
        <p className="text-sm">No tokens yet.</p>
      ) : null}
      {tokens.hasNextPage ? (
        <Button className="mt-3" onClick={() => void tokens.fetchNextPage()}>
          Load more
        </Button>
      ) : null}
      {role ? <CreateToken orgId={orgId} role={role} open={creating} onOpenChange={setCreating} /> : null}
    </>
  );
}

function CreateToken({
  orgId,
  role,
  open,
  onOpenChange,
}: {
  orgId: string;
  role: OrgRole;
  open: boolean;
  onOpenChange: (o: boolean) => void;
}) {
  const queryClient = useQueryClient();
  const [name, setName] = useState("");
  const [tokenRole, setTokenRole] = useState<OrgRole>(role);
  const [projectId, setProjectId] = useState("");
  const [expiry, setExpiry] = useState("30d");
  const [created, setCreated] = useState<(ApiToken & { token: string }) | undefined>();
  const [confirmed, setConfirmed] = useState(false);
  const parsed = parseExpiry(expiry);
  const create = useMutation({
    mutationFn: () =>
      call("createApiToken", {
        path: { orgId },
        body: {
          name,
          role: tokenRole,
          ...(projectId ? { projectId } : {}),
          ...(parsed.expiresAt ? { expiresAt: parsed.expiresAt } : {}),
        },
      }),
    onSuccess: (token) => {
      setCreated(token);
      void queryClient.invalidateQueries({ queryKey: ["api-tokens", orgId] });
    },
  });
  const close = () => {
    setCreated(undefined);
    setConfirmed(false);
    setName("");
    create.reset();
    onOpenChange(false);
  };
  const fieldError = fieldErrorsOf(create.error);
  return (
    <FormDialog
      open={open}
      onOpenChange={(o) => (o ? onOpenChange(true) : close())}
      title={created ? "Copy your new token" : "New API token"}
      {...(created
        ? { description: "This is the only time the token is shown. Store it now; it cannot be read again." }
        : {})}
      locked={!!created && !confirmed}
      submission={create}
      onSubmit={() => create.mutate()}
      submitLabel="Create token"
      pendingLabel="Creating…"
      invalid={!!parsed.error}
      done={
        created ? (
          <>
            <SecretValue id="new-token-secret" label="Token" secret={created.token} />
            <label className="mb-3 flex items-center gap-2 text-sm">
              <input type="checkbox" checked={confirmed} onChange={(e) => setConfirmed(e.target.checked)} />I have
              stored this token
            </label>
            <Button variant="primary" disabled={!confirmed} onClick={close}>
              Done
            </Button>
          </>
        ) : undefined
      }
    >
      <TextField
        label="Name"
        error={fieldError("name")}
        required
        maxLength={100}
        value={name}
        onChange={(e) => setName(e.target.value)}
      />
      <RoleField
        label="Role"
        error={fieldError("role")}
        hint="At most your own role"
        roles={grantableRoles(role)}
        value={tokenRole}
        onChange={setTokenRole}
      />
      <ProjectSelect
        orgId={orgId}
        value={projectId}
        onChange={setProjectId}
        error={fieldError("projectId")}
        hint="Restrict the token to one project"
      />
      <Field
        label="Expires in"
        error={parsed.error ?? fieldError("expiresAt")}
        hint="30d, 12h, 2w, 1y; empty for never"
      >
        {(p) => <input {...p} className={INPUT} value={expiry} onChange={(e) => setExpiry(e.target.value)} />}
      </Field>
    </FormDialog>
  );
}
