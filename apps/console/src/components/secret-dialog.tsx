import { useState } from "react";
import { Dialog } from "./dialog.tsx";
import { Button, INPUT } from "./ui.tsx";

/** A secret shown exactly once: copy it, confirm it is stored, and only then may the dialog close. */
export function SecretDialog({
  title,
  label,
  secret,
  description,
  onClose,
}: {
  title: string;
  label: string;
  secret: string | undefined;
  description: string;
  onClose: () => void;
}) {
  const [confirmed, setConfirmed] = useState(false);
  const [copied, setCopied] = useState(false);
  const close = () => {
    setConfirmed(false);
    setCopied(false);
    onClose();
  };
  return (
    <Dialog
      open={secret !== undefined}
      onOpenChange={(o) => (o ? undefined : close())}
      title={title}
      description={description}
      locked={!confirmed}
    >
      <label className="text-sm font-medium" htmlFor="shown-once-secret">
        {label}
      </label>
      <div className="mb-3 flex gap-2">
        <input
          id="shown-once-secret"
          readOnly
          className={`${INPUT} flex-1 font-mono`}
          value={secret ?? ""}
          onFocus={(e) => e.target.select()}
        />
        <Button
          onClick={async () => {
            await navigator.clipboard?.writeText(secret ?? "").catch(() => {});
            setCopied(true);
          }}
        >
          {copied ? "Copied" : "Copy"}
        </Button>
      </div>
      <label className="mb-3 flex items-center gap-2 text-sm">
        <input type="checkbox" checked={confirmed} onChange={(e) => setConfirmed(e.target.checked)} />I have stored it
      </label>
      <Button variant="primary" disabled={!confirmed} onClick={close}>
        Done
      </Button>
    </Dialog>
  );
}
