// The confirmation dialog every action goes through (a native <dialog>: modal, focus kept inside,
// Escape cancels). Resolves with the form's field values, or null when cancelled.
import { h } from "./dom.js";

export interface Field {
  name: string;
  label: string;
  value?: string;
  required?: boolean;
  options?: readonly { value: string; label: string }[];
}

export interface ConfirmOptions {
  title: string;
  body: string;
  confirmLabel: string;
  danger?: boolean;
  fields?: readonly Field[];
}

export function confirmAction(options: ConfirmOptions): Promise<Record<string, string> | null> {
  return new Promise((resolve) => {
    const inputs: (HTMLInputElement | HTMLSelectElement)[] = [];
    const fieldEls = (options.fields ?? []).map((field) => {
      const id = `dlg-${field.name}`;
      const control = field.options
        ? h("select", { id, name: field.name }, field.options.map((o) => h("option", { value: o.value, selected: o.value === field.value }, o.label)))
        : h("input", { id, name: field.name, type: "text", value: field.value ?? "", required: field.required, maxlength: 500, autocomplete: "off" });
      inputs.push(control);
      return h("div", { class: "field" }, h("label", { for: id }, field.label), control);
    });
    const error = h("p", { class: "dialog-error", role: "alert" });
    const cancel = h("button", { type: "button", class: "btn", "data-action": "cancel" }, "Cancel");
    const confirm = h("button", { type: "submit", class: options.danger ? "btn btn-danger" : "btn btn-primary", "data-action": "confirm" }, options.confirmLabel);
    const form = h("form", { method: "dialog" }, h("h2", { id: "dlg-title" }, options.title), h("p", { id: "dlg-body" }, options.body), fieldEls, error, h("div", { class: "dialog-buttons" }, cancel, confirm));
    const dialog = h("dialog", { class: "confirm", "aria-labelledby": "dlg-title", "aria-describedby": "dlg-body" }, form);
    let settled = false;
    const finish = (value: Record<string, string> | null): void => {
      if (settled) return;
      settled = true;
      if (dialog.open) dialog.close();
      dialog.remove();
      resolve(value);
    };
    cancel.addEventListener("click", () => finish(null));
    dialog.addEventListener("cancel", () => finish(null));
    dialog.addEventListener("close", () => finish(null));
    form.addEventListener("submit", (event) => {
      event.preventDefault();
      const values: Record<string, string> = {};
      for (const input of inputs) {
        const value = input.value.trim();
        if (input instanceof HTMLInputElement && input.required && !value) {
          error.textContent = "This field is required.";
          input.focus();
          return;
        }
        values[input.name] = value;
      }
      finish(values);
    });
    document.body.appendChild(dialog);
    dialog.showModal();
    (inputs[0] ?? confirm).focus();
  });
}
