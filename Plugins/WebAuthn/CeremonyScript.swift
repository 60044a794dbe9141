import GatehousePluginKit

/// The script the `webauthn_create` and `webauthn_get` pages run (served as a static file under the
/// pages' strict Content-Security-Policy): it reads the options from the page's challenge data, runs
/// the ceremony when the person presses the button (and, for a passkey sign-in, offers passkeys in a
/// username field's autofill: conditional mediation), and submits the credential's JSON in the
/// form's `credential` field. Browsers without `PublicKeyCredential.parse…FromJSON` or `toJSON` get
/// the same conversions done here.
enum CeremonyScript {
    static let source = #"""
        (() => {
          "use strict";
          const data = JSON.parse(document.getElementById("challenge-data").dataset.challenge);
          const options = data.publicKey;
          const form = document.querySelector("main form[method=post]");
          const field = document.getElementById("field-credential");
          const button = form.querySelector("button[type=submit]:not([name])");
          const label = form.querySelector("label[for=field-credential]");
          field.required = false;
          field.hidden = true;
          if (label) label.hidden = true;

          const fromB64 = (text) => {
            const base64 = text.replace(/-/g, "+").replace(/_/g, "/");
            const binary = atob(base64 + "===".slice((base64.length + 3) % 4));
            return Uint8Array.from(binary, (c) => c.charCodeAt(0)).buffer;
          };
          const toB64 = (buffer) => {
            const bytes = new Uint8Array(buffer);
            let binary = "";
            for (const byte of bytes) binary += String.fromCharCode(byte);
            return btoa(binary).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
          };
          const descriptors = (list) => (list || []).map((d) => ({ ...d, id: fromB64(d.id) }));
          const creation = () => PublicKeyCredential.parseCreationOptionsFromJSON
            ? PublicKeyCredential.parseCreationOptionsFromJSON(options)
            : { ...options, challenge: fromB64(options.challenge), user: { ...options.user, id: fromB64(options.user.id) },
                excludeCredentials: descriptors(options.excludeCredentials) };
          const request = () => PublicKeyCredential.parseRequestOptionsFromJSON
            ? PublicKeyCredential.parseRequestOptionsFromJSON(options)
            : { ...options, challenge: fromB64(options.challenge), allowCredentials: descriptors(options.allowCredentials) };
          const asJSON = (credential) => {
            if (typeof credential.toJSON === "function") return credential.toJSON();
            const r = credential.response;
            const response = { clientDataJSON: toB64(r.clientDataJSON) };
            if (r.attestationObject) {
              response.attestationObject = toB64(r.attestationObject);
              response.transports = r.getTransports ? r.getTransports() : [];
            } else {
              response.authenticatorData = toB64(r.authenticatorData);
              response.signature = toB64(r.signature);
              if (r.userHandle) response.userHandle = toB64(r.userHandle);
            }
            return { id: credential.id, rawId: toB64(credential.rawId), type: credential.type, response,
                     authenticatorAttachment: credential.authenticatorAttachment, clientExtensionResults: credential.getClientExtensionResults() };
          };
          const say = (text) => {
            let alert = document.getElementById("webauthn-error");
            if (!alert) {
              alert = document.createElement("p");
              alert.id = "webauthn-error";
              alert.className = "error";
              alert.setAttribute("role", "alert");
              form.before(alert);
            }
            alert.textContent = text;
          };
          const submit = (credential) => {
            field.value = JSON.stringify(asJSON(credential));
            form.submit();
          };
          const failed = (error) => {
            if (error && error.name === "AbortError") return;
            say(error && error.name === "NotAllowedError"
              ? "The passkey request was cancelled or timed out. Try again."
              : "Your browser could not use a passkey here" + (error && error.message ? ": " + error.message : "."));
          };
          if (!window.PublicKeyCredential || !navigator.credentials) {
            say("This browser cannot use passkeys.");
            button.disabled = true;
            return;
          }
          let pending = null;
          if (options.user) {
            button.addEventListener("click", (event) => {
              event.preventDefault();
              navigator.credentials.create({ publicKey: creation() }).then(submit, failed);
            });
            return;
          }
          button.addEventListener("click", (event) => {
            event.preventDefault();
            if (pending) pending.abort();
            navigator.credentials.get({ publicKey: request() }).then(submit, failed);
          });
          if (data.mediation === "conditional" && PublicKeyCredential.isConditionalMediationAvailable) {
            PublicKeyCredential.isConditionalMediationAvailable().then((available) => {
              if (!available) return;
              // A username field whose autofill offers the passkeys of this site (it is not submitted).
              const input = document.createElement("input");
              input.id = "webauthn-username";
              input.type = "text";
              input.autocomplete = "username webauthn";
              const caption = document.createElement("label");
              caption.htmlFor = input.id;
              caption.textContent = "Username";
              button.before(caption, input);
              pending = new AbortController();
              navigator.credentials.get({ publicKey: request(), mediation: "conditional", signal: pending.signal }).then(submit, failed);
            });
          }
        })();
        """#

    static let script = ChallengeElement.script(source: source, data: ["publicKey", "mediation"])
}
