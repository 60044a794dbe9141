/// The browser pages, as Mustache templates. `{{x}}` escapes HTML; the only unescaped value is the
/// layout's `{{{content}}}`, which is itself a rendered (escaped) template. Plain HTML forms: the
/// pages work without JavaScript and with screen readers (labels, `role="alert"` for errors).
enum PageTemplates {
    static let layout = """
        <!DOCTYPE html>
        <html lang="{{t.language}}" dir="{{t.direction}}">
        <head>
        <meta charset="utf-8">
        <meta name="viewport" content="width=device-width, initial-scale=1">
        <meta name="referrer" content="no-referrer">
        <title>{{title}} · {{siteName}}</title>
        <style>
        :root{--brand:{{#brand.color}}{{brand.color}}{{/brand.color}}{{^brand.color}}#0b5cad{{/brand.color}}}
        body{font-family:system-ui,sans-serif;background:#f4f5f7;color:#1b1d21;margin:0}
        main{max-width:24rem;overflow-wrap:anywhere;margin:4rem auto;background:#fff;padding:2rem;border-radius:.5rem;box-shadow:0 1px 3px rgba(0,0,0,.2)}
        h1{font-size:1.4rem;margin-top:0}
        label{display:block;margin:1rem 0 .3rem;font-weight:600}
        input[type=text],input[type=password],input[type=email],textarea{width:100%;box-sizing:border-box;padding:.6rem;font-size:1rem;border:1px solid #767676;border-radius:.3rem}
        button,input,select,textarea{font-family:inherit}
        a{color:var(--brand)}
        button{margin-top:1.2rem;padding:.6rem 1.2rem;font-size:1rem;border-radius:.3rem;border:1px solid var(--brand);background:var(--brand);color:#fff;cursor:pointer;max-width:100%;overflow-wrap:anywhere}
        img.logo{display:block;max-width:12rem;max-height:4rem;margin:0 0 1rem}
        footer.brand-links{margin-top:2rem;font-size:.9rem;display:flex;gap:1rem;flex-wrap:wrap}
        ul.rules{padding-inline-start:1.2rem;margin:.3rem 0 0;color:#3b3f45}
        div.switch{margin-top:1.5rem}
        form.inline-link{display:inline}form.inline-link button{margin:0;padding:0;border:0;background:none;color:var(--brand);text-decoration:underline;font-size:1rem}
        button.secondary{background:#fff;color:var(--brand)}
        a.link-out{display:inline-block;padding:.6rem 1.2rem;border-radius:.3rem;background:var(--brand);color:#fff}
        button:focus,input:focus,textarea:focus,a:focus{outline:3px solid #ffbf47;outline-offset:1px}
        .error{color:#a4000f;background:#fdecee;padding:.6rem;border-radius:.3rem}
        .providers button{display:block;width:100%}
        fieldset{border:0;padding:0;margin:0}
        img.challenge-image{display:block;width:14rem;height:14rem;margin:0 auto}
        code.fact{font-size:1.05rem;letter-spacing:.05rem;overflow-wrap:anywhere}
        ul.facts{columns:2;padding-inline-start:1.2rem}
        .fact-label{font-weight:600;margin-bottom:.2rem}
        legend{font-weight:600}
        </style>
        {{#themeCSS}}<style>{{{themeCSS}}}</style>{{/themeCSS}}
        </head>
        <body>
        <main>
        {{#brand.logo}}<img class="logo" src="{{brand.logo}}" alt="{{brand.name}}">{{/brand.logo}}
        <h1>{{title}}</h1>
        {{{content}}}
        {{#brand.hasLinks}}<footer class="brand-links">{{#brand.supportURL}}<a href="{{brand.supportURL}}" rel="noopener noreferrer">{{t.help}}</a>{{/brand.supportURL}}{{#brand.privacyURL}}<a href="{{brand.privacyURL}}" rel="noopener noreferrer">{{t.privacy}}</a>{{/brand.privacyURL}}</footer>{{/brand.hasLinks}}
        </main>
        </body>
        </html>
        """

    /// Every challenge, from its declaration (`ChallengeDescription`): the inputs in order, the
    /// declared extra buttons, and a link-out when there is one.
    static let challenge = """
        {{#appName}}<p>{{t.toContinueTo}} <strong>{{appName}}</strong></p>{{/appName}}
        {{#error}}<p class="error" role="alert" id="form-error">{{error}}</p>{{/error}}
        {{#prompt}}<p>{{prompt}}</p>{{/prompt}}
        {{#link}}<p><a class="link-out" href="{{url}}">{{text}}</a></p>{{/link}}
        {{#image}}<p><img class="challenge-image" src="{{src}}" alt="{{alt}}"></p>{{/image}}
        {{#facts}}<p class="fact-label">{{label}}</p>
        {{#value}}<p><code class="fact">{{value}}</code></p>{{/value}}
        {{#list}}<ul class="facts">{{#items}}<li><code class="fact">{{.}}</code></li>{{/items}}</ul>{{/list}}{{/facts}}
        <form method="post" action="{{action}}">
        <input type="hidden" name="flow" value="{{flow}}">
        <input type="hidden" name="csrf" value="{{csrf}}">
        {{#hasRules}}<p class="fact-label" id="password-rules-label">{{t.passwordNeeds}}</p><ul class="rules" id="password-rules">{{#rules}}<li>{{.}}</li>{{/rules}}</ul>{{/hasRules}}
        {{#inputs}}
        {{#hidden}}<input type="hidden" name="{{name}}" value="{{value}}">{{/hidden}}
        {{#textarea}}<label for="{{id}}">{{label}}</label>
        <textarea id="{{id}}" name="{{name}}" rows="6"{{#required}} required{{/required}}{{#autofocus}} autofocus{{/autofocus}}{{#describedBy}} aria-describedby="form-error"{{/describedBy}}>{{value}}</textarea>{{/textarea}}
        {{#field}}<label for="{{id}}">{{label}}</label>
        <input id="{{id}}" name="{{name}}" type="{{type}}" autocomplete="{{autocomplete}}"{{#inputmode}} inputmode="{{inputmode}}"{{/inputmode}}{{#plain}} autocapitalize="none" spellcheck="false"{{/plain}} maxlength="{{maxLength}}"{{#required}} required{{/required}}{{#autofocus}} autofocus{{/autofocus}}{{#hasValue}} value="{{value}}"{{/hasValue}}{{#describedBy}} aria-describedby="form-error"{{/describedBy}}{{^describedBy}}{{#describedByRules}} aria-describedby="password-rules"{{/describedByRules}}{{/describedBy}}>{{/field}}
        {{/inputs}}
        <button type="submit">{{submitLabel}}</button>
        {{#actions}}<button type="submit" name="{{name}}" value="{{value}}" class="secondary" formnovalidate>{{label}}</button>{{/actions}}
        {{#cancellable}}<button type="submit" name="cancel" value="1" class="secondary" formnovalidate>{{t.cancel}}</button>{{/cancellable}}
        </form>
        {{#script}}<div id="challenge-data" hidden data-challenge="{{data}}"></div>
        <script src="{{src}}" defer></script>{{/script}}
        {{> signInLinks}}
        """

    /// A form that posts itself on (`PageRenderer.autoPost`): to an identity provider (SAML's HTTP-POST
    /// binding), or back to the broker's callback with the browser's cookie.
    static let autoPost = """
        <p>{{t.takingYouOn}}</p>
        <form method="post" action="{{action}}" id="auto-post">
        {{#fields}}<input type="hidden" name="{{name}}" value="{{value}}">{{/fields}}
        <button type="submit">{{t.continue}}</button>
        </form>
        <script src="{{script}}" defer></script>
        """

    /// The script of `autoPost`: submits its form once the page is read.
    static let autoPostScript = """
        document.getElementById("auto-post").submit();
        """

    /// "Create an account" and "Forgot password" under a sign-in page, "Already have an account? Sign
    /// in" under a registration page, each its own small form (the
    /// flow and CSRF token travel in the body, never in a URL).
    static let signInLinks = """
        {{#offersRecovery}}<form method="post" action="{{recoverAction}}"><input type="hidden" name="flow" value="{{flow}}"><input type="hidden" name="csrf" value="{{csrf}}"><button type="submit" class="secondary" id="forgot-password">{{t.forgotPassword}}</button></form>{{/offersRecovery}}
        {{#offersRegistration}}<form method="post" action="{{registerAction}}"><input type="hidden" name="flow" value="{{flow}}"><input type="hidden" name="csrf" value="{{csrf}}"><button type="submit" class="secondary" id="create-account">{{t.createAnAccount}}</button></form>{{/offersRegistration}}
        {{#offersSignIn}}<div class="switch">{{t.alreadyHaveAccount}} <form method="post" action="{{signInAction}}" class="inline-link"><input type="hidden" name="flow" value="{{flow}}"><input type="hidden" name="csrf" value="{{csrf}}"><button type="submit" id="sign-in-instead">{{t.signIn}}</button></form></div>{{/offersSignIn}}
        """

    static let chooser = """
        {{#appName}}<p>{{t.toContinueTo}} <strong>{{appName}}</strong></p>{{/appName}}
        <form method="post" action="{{action}}">
        <input type="hidden" name="flow" value="{{flow}}">
        <input type="hidden" name="csrf" value="{{csrf}}">
        <fieldset class="providers">
        <legend>{{legend}}</legend>
        {{#providers}}<button type="submit" name="provider" value="{{id}}">{{label}}</button>{{/providers}}
        </fieldset>
        <button type="submit" name="cancel" value="1" class="secondary">{{t.cancel}}</button>
        </form>
        {{> signInLinks}}
        """

    static let error = """
        <p class="error" role="alert">{{description}}</p>
        <p>{{t.errorCode}} <code>{{code}}</code>{{#requestID}} · {{t.request}} <code>{{requestID}}</code>{{/requestID}}</p>
        <p>{{t.goBack}}</p>
        """

    /// RP-initiated logout without a hint naming this session: the person confirms first.
    static let logoutConfirm = """
        <p>{{t.signedInAs}} <strong>{{username}}</strong>.{{#appName}} <strong>{{appName}}</strong> {{t.asksToSignOut}}{{/appName}}</p>
        <p>{{t.signingOutEnds}}</p>
        <form method="post" action="{{action}}">
        {{#fields}}<input type="hidden" name="{{name}}" value="{{value}}">{{/fields}}
        <button type="submit" name="confirm" value="1" autofocus>{{t.signOut}}</button>
        <button type="submit" name="stay" value="1" class="secondary">{{t.staySignedIn}}</button>
        </form>
        """

    /// After logout (when the app named no page to return to), or after choosing to stay signed in.
    static let signedOut = """
        {{^stayed}}<p role="status">{{t.signedOutClose}}</p>{{/stayed}}
        {{#stayed}}<p role="status">{{t.stillSignedIn}}</p>{{/stayed}}
        """

    /// The device grant's verification page (RFC 8628 section 3.3): the person types the code their
    /// device shows. A plain GET form, so `verification_uri_complete` is the same request filled in.
    static let deviceCode = """
        <p>{{t.enterDeviceCode}}</p>
        {{#error}}<p class="error" role="alert" id="user_code-error">{{error}}</p>{{/error}}
        <form method="get" action="{{action}}">
        <label for="user_code">{{t.code}}</label>
        <input id="user_code" name="user_code" type="text" value="{{value}}" autocomplete="off" autocapitalize="characters" spellcheck="false" maxlength="32" required autofocus{{#error}} aria-invalid="true" aria-describedby="user_code-error"{{/error}}>
        <button type="submit">{{t.continue}}</button>
        </form>
        """

    /// Where the verification page's flow ends.
    static let deviceResult = """
        {{#approved}}<p role="status">{{t.deviceSignedIn}}</p>{{/approved}}
        {{#denied}}<p role="status">{{t.deviceNotSignedIn}}</p>{{/denied}}
        {{#failed}}<p role="alert" class="error">{{t.deviceFailed}}</p>{{/failed}}
        """
}
