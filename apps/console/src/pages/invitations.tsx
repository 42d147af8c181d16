import { useInfiniteQuery, useMutation, useQueryClient } from "@tanstack/react-query";
import { useState } from "react";
import { useParams } from "react-router";
import { call } from "../api/client.ts";
import { useOrgRole } from "../api/hooks.ts";
import { CopyButton } from "../components/copy-button.tsx";
import { FormDialog, RoleField } from "../components/form.tsx";
import { Button, ErrorNote, Guarded, INPUT, Loading, PageTitle, Table, Td, TextField } from "../components/ui.tsx";
import { allows, grantableRoles, type OrgRole } from "../lib/permissions.ts";
import { fieldErrorsOf } from "../lib/problem.ts";

const PAGE = 50;

/** Invitations: create (the link shown to send), list every status, copy a pending one's link, revoke. */
export default function InvitationsPage() {
  const { orgId } = useParams() as { orgId: string };
  const role = useOrgRole(orgId);
  const queryClient = useQueryClient();
  const [inviting, setInviting] = useState(false);
  const manage = allows("invitations:manage", { ...(role ? { org: role } : {}) });
  const invitations = useInfiniteQuery({
    queryKey: ["invitations", orgId],
    queryFn: ({ pageParam }) => call("listInvitations", { path: { orgId }, query: { limit: PAGE, cursor: pageParam } }),
    initialPageParam: undefined as string | undefined,
    getNextPageParam: (last) => last.nextCursor,
    enabled: manage.allowed,
  });
  const revoke = useMutation({
    mutationFn: (invitationId: string) => call("revokeInvitation", { path: { orgId, invitationId } }),
    onSuccess: () => void queryClient.invalidateQueries({ queryKey: ["invitations", orgId] }),
  });
  const rows = invitations.data?.pages.flatMap((p) => p.items) ?? [];
  return (
    <>
      <PageTitle
        actions={
          <Guarded allowance={manage}>
            {(disabled) => (
              <Button variant="primary" disabled={disabled} onClick={() => setInviting(true)}>
                Invite someone
              </Button>
            )}
          </Guarded>
        }
      >
        Invitations
      </PageTitle>
      {!manage.allowed ? <p className="mb-3 text-sm">Seeing and sending invitations: {manage.reason}.</p> : null}
      {invitations.isLoading ? <Loading what="invitations" /> : null}
      <ErrorNote error={invitations.error} retry={() => void invitations.refetch()} />
      <ErrorNote error={revoke.error} />
      {rows.length ? (
        <Table label="Invitations" headers={["Email", "Role", "Status", "Expires", "Link", ""]}>
          {rows.map((i) => (
            <tr key={i.id}>
              <Td>{i.email}</Td>
              <Td>{i.role}</Td>
              <Td>{i.status}</Td>
              <Td>{new Date(i.expiresAt).toLocaleString()}</Td>
              <Td>{i.acceptUrl ? <CopyLink url={i.acceptUrl} email={i.email} /> : null}</Td>
              <Td>
                {i.status === "pending" ? (
                  <Button
                    variant="danger"
                    aria-label={`Revoke the invitation of ${i.email}`}
                    disabled={revoke.isPending}
                    onClick={() => revoke.mutate(i.id)}
                  >
                    Revoke
                  </Button>
                ) : null}
              </Td>
            </tr>
          ))}
        </Table>
      ) : invitations.isSuccess ? (
        <p className="text-sm">No invitations yet.</p>
      ) : null}
      {invitations.hasNextPage ? (
        <Button className="mt-3" onClick={() => void invitations.fetchNextPage()}>
          Load more
        </Button>
      ) : null}
      {role ? <Invite orgId={orgId} role={role} open={inviting} onOpenChange={setInviting} /> : null}
    </>
  );
}

function CopyLink({ url, email }: { url: string; email: string }) {
  return <CopyButton text={url} label="Copy link" hint={`for ${email}`} />;
}

function Invite({
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
  const [email, setEmail] = useState("");
  const [invitedRole, setInvitedRole] = useState<OrgRole>("member");
  const create = useMutation({
    mutationFn: () => call("createInvitation", { path: { orgId }, body: { email, role: invitedRole } }),
    onSuccess: () => void queryClient.invalidateQueries({ queryKey: ["invitations", orgId] }),
  });
  const fieldError = fieldErrorsOf(create.error);
  const close = () => {
    create.reset();
    setEmail("");
    onOpenChange(false);
  };
  const link = create.data?.acceptUrl;
  return (
    <FormDialog
      open={open}
      onOpenChange={(o) => (o ? onOpenChange(true) : close())}
      title="Invite someone"
      submission={create}
      onSubmit={() => create.mutate()}
      submitLabel="Invite"
      pendingLabel="Inviting…"
      noValidate
      fieldErrorsBeside
      done={
        link ? (
          <>
            <p className="mb-2 text-sm">
              Send this link to {create.data?.email}. It opens the console, where they accept; it stays in the list
              while the invitation is pending.
            </p>
            <label className="text-sm font-medium" htmlFor="invitation-link">
              Invitation link
            </label>
            <input
              id="invitation-link"
              readOnly
              className={`${INPUT} mb-3 w-full font-mono`}
              value={link}
              onFocus={(e) => e.target.select()}
            />
            <div className="flex gap-2">
              <CopyLink url={link} email={create.data?.email ?? ""} />
              <Button variant="primary" onClick={close}>
                Done
              </Button>
            </div>
          </>
        ) : undefined
      }
    >
      <TextField
        label="Email"
        type="email"
        required
        maxLength={320}
        error={fieldError("email")}
        value={email}
        onChange={(e) => setEmail(e.target.value)}
      />
      <RoleField
        label="Role"
        error={fieldError("role")}
        hint="At most your own role"
        roles={grantableRoles(role)}
        value={invitedRole}
        onChange={setInvitedRole}
      />
    </FormDialog>
  );
}
