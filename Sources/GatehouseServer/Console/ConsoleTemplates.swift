/// The admin console's pages, as Mustache templates (`{{x}}` escapes HTML; only the layout's
/// `{{{content}}}`, itself a rendered template, is not escaped). Plain HTML forms, no script:
/// every control has a label, errors sit next to their field (`aria-describedby`) and in a summary
/// (`role="alert"`) that links to them, the current page is marked for screen readers, and focus
/// is always visible.
enum ConsoleTemplates {
    static let layout = """
        <!DOCTYPE html>
        <html lang="{{t.language}}" dir="{{t.direction}}">
        <head>
        <meta charset="utf-8">
        <meta name="viewport" content="width=device-width, initial-scale=1">
        <meta name="referrer" content="same-origin">
        <title>{{title}} · {{brandLabel}}</title>
        <style>
        html{scroll-padding-bottom:5rem}
        body{font-family:system-ui,sans-serif;background:#f4f5f7;color:#1b1d21;margin:0;line-height:1.45}
        a{color:#0b5cad}
        .skip{position:absolute;left:-999px}.skip:focus{left:1rem;top:1rem;background:#fff;padding:.5rem;z-index:2}
        header{background:#1b1d21;color:#fff;padding:.6rem 1.5rem;display:flex;flex-wrap:wrap;gap:1rem;align-items:center}
        header a{color:#fff}header .brand{font-weight:700;margin-right:1rem;text-decoration:none}
        nav ul{list-style:none;margin:0;padding:0;display:flex;flex-wrap:wrap;gap:1rem}
        nav a[aria-current=page]{font-weight:700;text-decoration:underline 3px}
        header form{margin-left:auto;display:flex;gap:.8rem;align-items:center}
        header button{background:transparent;color:#fff;border:1px solid #fff;margin:0;padding:.3rem .8rem}
        main{max-width:72rem;overflow-wrap:anywhere;margin:1.5rem auto;background:#fff;padding:1.5rem 2rem;border-radius:.5rem;box-shadow:0 1px 3px rgba(0,0,0,.2)}
        h1{font-size:1.5rem;margin-top:0}h2{font-size:1.2rem;margin-top:2rem;border-bottom:1px solid #d0d3d8;padding-bottom:.3rem}
        table{border-collapse:collapse;width:100%;margin:.5rem 0}th,td{text-align:left;padding:.4rem .6rem;border-bottom:1px solid #d0d3d8;vertical-align:top}
        th{background:#eef0f3}
        label{display:block;margin:.9rem 0 .2rem;font-weight:600}
        .check{margin:.5rem 0}.check label{display:inline;font-weight:400;margin-left:.3rem}
        .hint{display:block;color:#4a4f57;font-size:.9rem}
        input[type=text],input[type=password],input[type=search],input[type=datetime-local],select,textarea{width:100%;max-width:32rem;box-sizing:border-box;padding:.45rem;font-size:1rem;border:1px solid #767676;border-radius:.3rem}
        input[aria-invalid=true],textarea[aria-invalid=true],select[aria-invalid=true]{border:2px solid #a4000f}
        button,a.button{display:inline-block;margin-top:1rem;padding:.5rem 1.1rem;font-size:1rem;border-radius:.3rem;border:1px solid #0b5cad;background:#0b5cad;color:#fff;cursor:pointer;text-decoration:none}
        button.secondary,a.button.secondary{background:#fff;color:#0b5cad}
        button.danger,a.button.danger{background:#a4000f;border-color:#a4000f;color:#fff}
        table button,a.button.small,button.small{margin:0;padding:.25rem .7rem;font-size:.9rem}
        details.confirm summary{cursor:pointer;color:#0b5cad;text-decoration:underline}details.confirm[open]{background:#fdecee;padding:.4rem;border-radius:.3rem}details.confirm button{margin-top:.4rem}
        td input[type=text]{width:auto;max-width:12rem}
        .scroll{overflow-x:auto}
        .save-bar{position:sticky;bottom:0;background:#fff;padding:.6rem 0;border-top:1px solid #d0d3d8;z-index:1}.save-bar button{margin-top:0}
        details.section{border:1px solid #d0d3d8;border-radius:.3rem;margin:1rem 0;padding:.5rem 1rem}details.section summary{font-weight:700;cursor:pointer}
        @media (max-width:40rem){main{margin:0;border-radius:0;padding:1rem}dl{grid-template-columns:1fr}dd{margin-bottom:.4rem}header{padding:.6rem 1rem}}
        .filters{display:grid;grid-template-columns:repeat(auto-fill,minmax(14rem,1fr));gap:0 1rem}.filters label{margin-top:.5rem}
        button,input,select,textarea{font-family:inherit}
        button:focus,input:focus,textarea:focus,select:focus,a:focus,summary:focus{outline:3px solid #ffbf47;outline-offset:1px}
        .error{color:#a4000f;background:#fdecee;padding:.6rem .9rem;border-radius:.3rem;border-left:4px solid #a4000f}
        .notice{background:#e7f4ea;color:#14532d;padding:.6rem .9rem;border-radius:.3rem;border-left:4px solid #14532d}
        .field-error{color:#a4000f;font-weight:600;margin:.2rem 0}
        .secret{font-family:monospace;font-size:1.05rem;background:#fff7d6;padding:.6rem;border:1px solid #8a6d00;word-break:break-all}
        fieldset{border:1px solid #d0d3d8;border-radius:.3rem;margin:1rem 0;padding:.5rem 1rem 1rem}
        legend{font-weight:700;padding:0 .3rem}
        .inline{display:inline}
        .ok{color:#14532d;font-weight:600}.bad{color:#a4000f;font-weight:600}
        code{background:#eef0f3;padding:0 .2rem}
        dl{display:grid;grid-template-columns:max-content auto;gap:.3rem 1rem}dt{font-weight:600}dd{margin:0;min-width:0}
        pre.json{white-space:pre-wrap;overflow-wrap:anywhere;max-height:24rem;overflow:auto;background:#eef0f3;padding:.5rem;margin:0;font-size:.85rem}
        ul.changes{margin:0;padding-left:1.1rem}ins{background:#e7f4ea;text-decoration:none}del{background:#fdecee}
        td.audit-what{max-width:32rem}
        </style>
        </head>
        <body>
        <a class="skip" href="#main">{{t.skip}}</a>
        <header>
        <a class="brand" href="{{home}}">{{brandLabel}}</a>
        {{#signedIn}}
        {{#hasNav}}<nav aria-label="Console"><ul>
        {{#nav}}<li><a href="{{href}}"{{#current}} aria-current="page"{{/current}}>{{label}}</a></li>{{/nav}}
        </ul></nav>{{/hasNav}}
        <form method="post" action="{{signOutAction}}"><span>{{t.signedInAs}} <strong>{{username}}</strong></span>
        <input type="hidden" name="csrf" value="{{csrf}}"><button type="submit" id="sign-out">{{t.signOut}}</button></form>
        {{/signedIn}}
        </header>
        <main id="main" tabindex="-1">
        <h1>{{title}}</h1>
        {{#notice}}<p class="notice" role="status">{{notice}}</p>{{/notice}}
        {{#summary}}<div class="error" role="alert" id="error-summary"><p><strong>{{message}}</strong> <code>{{code}}</code></p>
        {{#issues}}<ul>{{#issues}}<li>{{#anchor}}<a href="#{{anchor}}">{{text}}</a>{{/anchor}}{{^anchor}}{{text}}{{/anchor}}</li>{{/issues}}</ul>{{/issues}}</div>{{/summary}}
        {{{content}}}
        </main>
        </body>
        </html>
        """

    /// One form field of any kind; errors come before the control, tied to it by `aria-describedby`.
    static let field = """
        {{#hidden}}<input type="hidden" name="{{name}}" value="{{value}}">{{/hidden}}
        {{#checkbox}}<div class="check"><input type="checkbox" id="{{id}}" name="{{name}}" value="on"{{#checked}} checked{{/checked}}{{#disabled}} disabled aria-describedby="{{id}}-hint"{{/disabled}}{{#error}} aria-invalid="true" aria-describedby="{{id}}-error"{{/error}}><label for="{{id}}">{{label}}</label>{{#hint}} <span class="hint" id="{{id}}-hint">{{hint}}</span>{{/hint}}{{#error}}<p class="field-error" id="{{id}}-error">{{error}}</p>{{/error}}</div>{{/checkbox}}
        {{#choices}}<fieldset id="{{id}}"><legend>{{label}}</legend>{{#hint}}<span class="hint">{{hint}}</span>{{/hint}}{{#error}}<p class="field-error" id="{{id}}-error">{{error}}</p>{{/error}}
        {{#options}}<div class="check"><input type="checkbox" id="{{id}}" name="{{name}}" value="on"{{#checked}} checked{{/checked}}><label for="{{id}}">{{label}}</label></div>{{/options}}
        {{^options}}<p>None configured.</p>{{/options}}</fieldset>{{/choices}}
        {{#control}}<label for="{{id}}">{{label}}</label>{{#hint}}<span class="hint" id="{{id}}-hint">{{hint}}</span>{{/hint}}
        {{#error}}<p class="field-error" id="{{id}}-error">{{error}}</p>{{/error}}
        {{#text}}<input type="{{inputType}}" id="{{id}}" name="{{name}}" value="{{value}}" autocomplete="off" spellcheck="false"{{#required}} required{{/required}}{{#error}} aria-invalid="true" aria-describedby="{{id}}-error"{{/error}}{{^error}}{{#hint}} aria-describedby="{{id}}-hint"{{/hint}}{{/error}}>{{/text}}
        {{#textarea}}<textarea id="{{id}}" name="{{name}}" rows="{{rows}}" spellcheck="false"{{#error}} aria-invalid="true" aria-describedby="{{id}}-error"{{/error}}{{^error}}{{#hint}} aria-describedby="{{id}}-hint"{{/hint}}{{/error}}>{{value}}</textarea>{{/textarea}}
        {{#select}}<select id="{{id}}" name="{{name}}"{{#error}} aria-invalid="true" aria-describedby="{{id}}-error"{{/error}}>{{#options}}<option value="{{value}}"{{#selected}} selected{{/selected}}>{{label}}</option>{{/options}}</select>{{/select}}
        {{/control}}
        """

    static let signIn = """
        <p>The admin console is for people whose account holds the admin role, or who belong to a directory group admitted to it.</p>
        <p><a class="button" id="console-sign-in" href="{{loginURL}}">Sign in with Gatehouse</a></p>
        """

    static let notAdmin = """
        <p>You are signed in as <strong>{{username}}</strong>, but this account has no admin role.</p>
        {{#bootstrapOpen}}
        <h2>Make this account the first admin</h2>
        <p>No one administers this broker yet. Whoever holds the static admin token (<code>GATEHOUSE_ADMIN_TOKEN</code> or <code>admin.tokens</code>) can make this account the first admin, once. Later admins are given the role by an admin.</p>
        <form method="post" action="/admin/bootstrap">
        <input type="hidden" name="csrf" value="{{csrf}}">
        {{#fields}}{{> field}}{{/fields}}
        <button type="submit" id="bootstrap">Make me the first admin</button>
        </form>
        {{/bootstrapOpen}}
        {{^bootstrapOpen}}<p>Ask an admin to give your account the admin role (<code>gatehouse admins grant {{username}}</code>), then sign in again.</p>{{/bootstrapOpen}}
        <form method="post" action="/admin/logout"><input type="hidden" name="csrf" value="{{csrf}}"><button type="submit" class="secondary" id="sign-out">Sign out</button></form>
        """

    static let home = """
        <dl>
        <dt>Apps</dt><dd><a href="/admin/apps">{{apps}}</a>{{#stateless}} ({{stateless}} with stateless authentication on){{/stateless}}</dd>
        <dt>Providers</dt><dd><a href="/admin/providers">{{providers}}</a>{{#unhealthy}} · <span class="bad">{{unhealthy}} unhealthy</span>{{/unhealthy}}</dd>
        <dt>Admins</dt><dd>{{#admins}}{{name}}{{^last}}, {{/last}}{{/admins}}</dd>
        <dt>Locked out</dt><dd><a href="/admin/lockouts">{{lockouts}}</a></dd>
        </dl>
        """

    static let apps = """
        <p><a class="button" href="/admin/apps/new" id="new-app">New app</a></p>
        <table><caption class="hint">Every app, with the switches admins change most.</caption>
        <thead><tr><th scope="col">App</th><th scope="col">Type</th><th scope="col">Providers</th><th scope="col">Stateless</th><th scope="col">Managed by</th><th scope="col">State</th></tr></thead>
        <tbody>{{#apps}}<tr><td><a href="/admin/apps/{{id}}">{{name}}</a> <code>{{id}}</code></td><td>{{type}}</td><td>{{providers}}</td><td>{{stateless}}</td><td>{{managedBy}}</td><td>{{state}}</td></tr>{{/apps}}</tbody>
        </table>
        """

    static let form = """
        {{#intro}}<p>{{intro}}</p>{{/intro}}
        <form method="post" action="{{action}}" novalidate>
        <input type="hidden" name="csrf" value="{{csrf}}">
        {{#fields}}{{> field}}{{/fields}}
        {{#sections}}<fieldset><legend>{{legend}}</legend>{{#fields}}{{> field}}{{/fields}}</fieldset>{{/sections}}
        <button type="submit" id="{{submitID}}"{{#danger}} class="danger"{{/danger}}>{{submitLabel}}</button>
        {{#cancel}}<a class="button secondary" href="{{cancel}}">Cancel</a>{{/cancel}}
        </form>
        """

    static let secretShown = """
        <p>{{intro}}</p>
        <p class="secret" id="client-secret">{{secret}}</p>
        <p>Copy it now: it is not shown again (only its digest is stored).</p>
        <p><a class="button" href="{{next}}">Continue</a></p>
        """

    static let app = """
        <dl>
        <dt>Id</dt><dd><code>{{app.id}}</code></dd>
        <dt>Type</dt><dd>{{type}}</dd>
        <dt>Managed by</dt><dd>{{app.managedBy}} (version {{app.version}}, changed {{updated}})</dd>
        <dt>Stateless authentication</dt><dd id="stateless-state">{{stateless}}</dd>
        </dl>
        {{#drift}}<h2>Drift from the config file</h2>
        <p>An admin changed this app at run time, so the config file's <code>apps[]</code> entry is not applied to it.{{#differences}} The config file says otherwise about: {{differences}}.{{/differences}}</p>
        <form method="post" action="/admin/apps/{{app.id}}/return-to-config"><input type="hidden" name="csrf" value="{{csrf}}"><button type="submit" class="secondary" id="return-to-config">Return to config</button> <span class="hint">The next start applies the config file's entry again.</span></form>
        {{/drift}}
        {{#builtIn}}<p class="notice" id="built-in">{{builtIn}} It follows the config file alone (<code>{{section}}</code>), so it has nothing to change here: its sign-ins, sessions and audit events are the only things to see.</p>{{/builtIn}}
        {{^builtIn}}<h2 id="settings">Settings</h2>
        {{> appSettings}}
        <h2 id="policy">Policy</h2>
        {{> policyForm}}
        {{#resources}}<h2>{{summary}}</h2>{{> resource}}{{/resources}}
        <h2 id="webhook">Webhook</h2>
        <p>{{#webhook.url}}Events go to <code>{{webhook.url}}</code>, signed with the app's webhook secret.{{/webhook.url}}{{^webhook.url}}No webhook: set <code>webhook.url</code> in the policy above to have this app's events delivered.{{/webhook.url}} <a class="button secondary" href="/admin/apps/{{app.id}}/webhook-secret" id="rotate-webhook-secret">Rotate the webhook secret</a></p>
        <h3>Dead letters</h3>
        <table><thead><tr><th scope="col">Delivery</th><th scope="col">Type</th><th scope="col">Subject</th><th scope="col">Created</th><th scope="col">Attempts</th><th scope="col">Last error</th><th scope="col"><span class="hint">Action</span></th></tr></thead>
        <tbody>{{#deadLetters}}<tr><td>{{id}}</td><td>{{type}}</td><td>{{subject}}</td><td>{{created}}</td><td>{{attempts}}</td><td>{{lastError}}</td><td><form method="post" action="/admin/apps/{{appID}}/dead-letters/{{id}}/replay" class="inline"><input type="hidden" name="csrf" value="{{csrf}}"><button type="submit" class="secondary" aria-label="Replay delivery {{id}}">Replay</button></form></td></tr>{{/deadLetters}}
        {{^deadLetters}}<tr><td colspan="7">None.</td></tr>{{/deadLetters}}</tbody></table>
        {{#hasDeadLetters}}<form method="post" action="/admin/apps/{{app.id}}/dead-letters/replay"><input type="hidden" name="csrf" value="{{csrf}}"><button type="submit" class="secondary" id="replay-all">Replay all</button></form>{{/hasDeadLetters}}
        <h2>Dangerous actions</h2>
        <p>{{#confidential}}<a class="button secondary" href="/admin/apps/{{app.id}}/secret" id="rotate-secret">Rotate the client secret</a> {{/confidential}}<a class="button danger" href="/admin/apps/{{app.id}}/delete" id="delete-app">Delete this app</a></p>{{/builtIn}}
        """

    static let appSettings = """
        <form method="post" action="/admin/apps/{{app.id}}" novalidate>
        <input type="hidden" name="csrf" value="{{csrf}}">
        {{#settingsFields}}{{> field}}{{/settingsFields}}
        <button type="submit" id="save-settings">Save settings</button>
        </form>
        """

    static let policyForm = """
        <form method="post" action="/admin/apps/{{app.id}}/policy" novalidate>
        <input type="hidden" name="csrf" value="{{csrf}}">
        {{#policySections}}{{#folded}}<details class="section" id="{{id}}"><summary>{{legend}}</summary>{{#fields}}{{> field}}{{/fields}}</details>{{/folded}}{{^folded}}<fieldset id="{{id}}"><legend>{{legend}}</legend>{{#fields}}{{> field}}{{/fields}}</fieldset>{{/folded}}{{/policySections}}
        <div class="save-bar"><button type="submit" id="save-policy">Save policy</button> <span class="hint">Nothing changes until you save; every node applies it from its next request.</span></div>
        </form>
        """

    /// A plugin's resource, rendered from its declaration: the items in a table, a form to add one.
    static let resource = """
        <table><thead><tr>{{#columns}}<th scope="col">{{.}}</th>{{/columns}}<th scope="col"><span class="hint">Action</span></th></tr></thead>
        <tbody>{{#items}}<tr>{{#cells}}<td>{{.}}</td>{{/cells}}<td><a class="button secondary small" href="{{removeLink}}" aria-label="Remove {{label}}">Remove</a></td></tr>{{/items}}
        {{^items}}<tr><td colspan="{{span}}">None yet.</td></tr>{{/items}}</tbody></table>
        {{#creatable}}<details{{#open}} open{{/open}}><summary>Add</summary>
        <form method="post" action="{{createAction}}" novalidate><input type="hidden" name="csrf" value="{{csrf}}">
        {{#fields}}{{> field}}{{/fields}}
        <button type="submit">Add</button></form></details>{{/creatable}}
        """

    static let confirm = """
        <p>{{description}}</p>
        {{#recent}}
        <form method="post" action="{{action}}">
        <input type="hidden" name="csrf" value="{{csrf}}">
        {{#fields}}{{> field}}{{/fields}}
        <button type="submit" class="danger" id="confirm">{{confirmLabel}}</button>
        <a class="button secondary" href="{{cancel}}">Cancel</a>
        </form>
        {{/recent}}
        {{^recent}}
        <p class="error" id="reauthenticate-notice">For your security, sign in again before you do this: your last sign-in is more than {{minutes}} minutes old.</p>
        <p><a class="button" href="/admin/reauthenticate?return={{returnTo}}" id="reauthenticate">Sign in again</a> <a class="button secondary" href="{{cancel}}">Cancel</a></p>
        {{/recent}}
        """

    static let providers = """
        <table><thead><tr><th scope="col">Provider</th><th scope="col">Type</th><th scope="col">Roles</th><th scope="col">Health</th><th scope="col">Last error (this node)</th></tr></thead>
        <tbody>{{#providers}}<tr><td><a href="/admin/providers/{{id}}">{{id}}</a></td><td>{{type}}</td><td>{{roles}}</td><td>{{#healthy}}<span class="ok">healthy</span>{{/healthy}}{{#unhealthy}}<span class="bad">unhealthy</span>: {{detail}}{{/unhealthy}}{{#unknown}}not reported{{/unknown}}</td><td>{{#lastError}}{{lastError}} ({{lastErrorAt}}){{/lastError}}{{^lastError}}none{{/lastError}}</td></tr>{{/providers}}</tbody></table>
        """

    static let provider = """
        <dl><dt>Type</dt><dd>{{type}}</dd><dt>Roles</dt><dd>{{roles}}</dd>
        <dt>Health</dt><dd>{{#healthy}}<span class="ok">healthy</span>{{/healthy}}{{#unhealthy}}<span class="bad">unhealthy</span>: {{detail}}{{/unhealthy}}{{#unknown}}not reported{{/unknown}}</dd>
        <dt>Last error (this node)</dt><dd>{{#lastError}}{{lastError}} ({{lastErrorAt}}){{/lastError}}{{^lastError}}none{{/lastError}}</dd></dl>
        {{#diagnosable}}<h2>Test against the upstream</h2>
        <p>Walks the provider's steps (connect, TLS, service bind, search...) and stops at the first that fails. With a username it looks the user up; with a password too, it signs in (the password is never stored or logged).</p>
        {{#hasSteps}}<table id="test-results"><thead><tr><th scope="col">Step</th><th scope="col">Result</th><th scope="col">Detail</th></tr></thead><tbody>{{#steps}}<tr><td>{{name}}</td><td>{{#passed}}<span class="ok">ok</span>{{/passed}}{{^passed}}<span class="bad">failed</span>{{/passed}}</td><td>{{detail}}</td></tr>{{/steps}}</tbody></table>{{/hasSteps}}
        <form method="post" action="/admin/providers/{{id}}/test" novalidate><input type="hidden" name="csrf" value="{{csrf}}">
        {{#fields}}{{> field}}{{/fields}}
        <button type="submit" id="test-provider">Run the test</button></form>{{/diagnosable}}
        {{#resources}}<h2>{{summary}}</h2>{{> resource}}{{/resources}}
        """

    static let users = """
        {{#canCreate}}<p><a class="button" href="/admin/users/new" id="new-user">New user</a></p>{{/canCreate}}
        <form method="get" action="/admin/users" role="search"><label for="q">Search by username or account id</label>
        <input type="search" id="q" name="q" value="{{query}}"> <button type="submit" id="search">Search</button></form>
        <div class="scroll"><table><caption class="hint">Every account Gatehouse knows, including users who have not signed in yet.</caption>
        <thead><tr><th scope="col">Username</th><th scope="col">Account id</th><th scope="col">Identities</th><th scope="col">Created</th><th scope="col">State</th><th scope="col">Admin</th></tr></thead>
        <tbody>{{#users}}<tr><td><a href="/admin/users/{{id}}">{{username}}</a></td><td><code>{{id}}</code></td><td>{{identities}}</td><td>{{created}}</td><td>{{#disabled}}<span class="bad">disabled</span>{{/disabled}}{{^disabled}}active{{/disabled}}</td><td>{{admin}}</td></tr>{{/users}}
        {{^users}}<tr><td colspan="6">No user matches.</td></tr>{{/users}}</tbody></table></div>
        {{> pager}}
        {{#hasDirectories}}<h2 id="directory">Search a directory</h2>
        <form method="get" action="/admin/users#directory" role="search"><label for="directory-provider">Provider</label>
        <select id="directory-provider" name="directory">{{#directories}}<option value="{{id}}"{{#selected}} selected{{/selected}}>{{id}}</option>{{/directories}}</select>
        <label for="dq">Part of a username, name or email address</label>
        <input type="search" id="dq" name="dq" value="{{directoryQuery}}" maxlength="100"> <button type="submit" id="directory-search">Search the directory</button></form>
        {{#directoryResult}}{{#error}}<p class="error" role="alert" id="directory-error">{{error}}</p>{{/error}}{{^error}}
        <div class="scroll"><table id="directory-results"><caption class="hint">People of {{provider}}, signed in or not yet{{#truncated}}; there are more: type more of the name{{/truncated}}.</caption>
        <thead><tr><th scope="col">Username</th><th scope="col">Name</th><th scope="col">Email address</th><th scope="col">Account</th></tr></thead>
        <tbody>{{#people}}<tr><td>{{username}}</td><td>{{name}}</td><td>{{email}}</td><td>{{#accountID}}<a href="/admin/users/{{accountID}}">its account</a>{{/accountID}}{{^accountID}}not signed in yet{{/accountID}}</td></tr>{{/people}}
        {{^people}}<tr><td colspan="4">Nobody matches.</td></tr>{{/people}}</tbody></table></div>{{/error}}{{/directoryResult}}{{/hasDirectories}}
        """

    static let pager = """
        <nav aria-label="Pages"><p>{{#previous}}<a href="{{previous}}" rel="prev">Newer / previous page</a> {{/previous}}{{#next}}<a href="{{next}}" rel="next" id="next-page">Next page</a>{{/next}}</p></nav>
        """

    static let user = """
        <dl><dt>Account id</dt><dd><code>{{user.id}}</code></dd><dt>Created</dt><dd>{{created}}</dd>{{#user.testAccount}}<dt>Test account</dt><dd>yes</dd>{{/user.testAccount}}
        <dt>State</dt><dd id="account-state">{{#disabled}}<span class="bad">Disabled</span> since {{disabledAt}} by {{disabledBy}}{{/disabled}}{{^disabled}}Active{{/disabled}}</dd>
        <dt>Admin role</dt><dd id="admin-role">{{#isAdmin}}yes{{/isAdmin}}{{^isAdmin}}no{{/isAdmin}}</dd></dl>
        <p class="actions">{{#hasPassword}}<a class="button secondary" href="/admin/users/{{user.id}}/password" id="reset-password">Reset the password</a> {{/hasPassword}}{{#disabled}}<a class="button secondary" href="/admin/users/{{user.id}}/enable" id="enable-user">Enable the account</a>{{/disabled}}{{^disabled}}<a class="button secondary" href="/admin/users/{{user.id}}/disable" id="disable-user">Disable the account</a>{{/disabled}}</p>
        <form method="post" action="/admin/users/{{user.id}}/admin-role"><input type="hidden" name="csrf" value="{{csrf}}">
        {{#isAdmin}}<input type="hidden" name="grant" value="false"><button type="submit" class="secondary" id="revoke-admin">Take the admin role away</button>{{/isAdmin}}
        {{^isAdmin}}<input type="hidden" name="grant" value="true"><button type="submit" class="secondary" id="grant-admin">Give the admin role</button>{{/isAdmin}}</form>
        <h2>Identities</h2>
        <div class="scroll"><table><thead><tr><th scope="col">Provider</th><th scope="col">Subject</th><th scope="col">Claims</th><th scope="col">Last sign-in</th></tr></thead>
        <tbody>{{#identities}}<tr><td>{{provider}}</td><td><code>{{subject}}</code></td><td>{{claims}}</td><td>{{lastSignIn}}</td></tr>{{/identities}}</tbody></table></div>
        <h2>Devices</h2>
        <div class="scroll"><table><thead><tr><th scope="col">Device</th><th scope="col">Details</th><th scope="col">Registered</th><th scope="col"><span class="hint">Action</span></th></tr></thead>
        <tbody>{{#devices}}<tr><td><code>{{id}}</code></td><td>{{summary}}</td><td>{{created}}</td><td><a class="button secondary small" href="/admin/users/{{userID}}/devices/{{id}}/remove" aria-label="Remove device {{id}}">Remove</a></td></tr>{{/devices}}
        {{^devices}}<tr><td colspan="4">None.</td></tr>{{/devices}}</tbody></table></div>
        <h2>Sessions</h2>
        <div class="scroll"><table><thead><tr><th scope="col">Signed in</th><th scope="col">Last seen</th><th scope="col">Apps</th><th scope="col">From</th><th scope="col"><span class="hint">Action</span></th></tr></thead>
        <tbody>{{#sessions}}<tr><td>{{authTime}}</td><td>{{lastSeen}}</td><td>{{apps}}</td><td>{{from}}</td><td><a class="button secondary small" href="/admin/users/{{userID}}/sessions/{{id}}/end" aria-label="End the session from {{authTime}}">End</a></td></tr>{{/sessions}}
        {{^sessions}}<tr><td colspan="5">None.</td></tr>{{/sessions}}</tbody></table></div>
        <h2>Lockouts</h2>
        {{> lockoutTable}}
        <h2>Provisional identities</h2>
        <div class="scroll"><table><thead><tr><th scope="col">Email</th><th scope="col">App</th><th scope="col">State</th></tr></thead>
        <tbody>{{#provisional}}<tr><td>{{email}}</td><td>{{app}}</td><td>{{state}}</td></tr>{{/provisional}}{{^provisional}}<tr><td colspan="3">None.</td></tr>{{/provisional}}</tbody></table></div>
        {{#credentials}}<h2>{{summary}}</h2>
        <div class="scroll"><table class="credentials"><thead><tr>{{#columns}}<th scope="col">{{.}}</th>{{/columns}}<th scope="col"><span class="hint">Action</span></th></tr></thead>
        <tbody>{{#items}}<tr>{{#cells}}<td>{{.}}</td>{{/cells}}<td>{{#removable}}<a class="button secondary small" href="{{removeLink}}" aria-label="Remove {{label}}">Remove</a>{{/removable}}</td></tr>{{/items}}
        {{^items}}<tr><td colspan="{{span}}">None.</td></tr>{{/items}}</tbody></table></div>{{/credentials}}
        <h2>Dangerous actions</h2>
        <p><a class="button danger" href="/admin/users/{{user.id}}/delete" id="delete-user">Delete this user</a></p>
        """

    static let lockoutTable = """
        <div class="scroll"><table><thead><tr><th scope="col">Who or what</th><th scope="col">Locked</th><th scope="col">By</th><th scope="col">Until</th><th scope="col">Lockouts</th><th scope="col"><span class="hint">Action</span></th></tr></thead>
        <tbody>{{#lockouts}}<tr><td>{{#accountID}}<a href="/admin/users/{{accountID}}">{{username}}</a>{{/accountID}}{{^accountID}}{{subject}}{{/accountID}}</td><td>{{what}}</td><td>{{provider}}</td><td>{{#permanent}}permanently (until an admin unlocks){{/permanent}}{{^permanent}}{{until}}{{/permanent}}</td><td>{{count}}</td><td><a class="button secondary small" href="/admin/lockouts/unlock?key={{keyQuery}}&amp;return={{returnQuery}}" aria-label="Unlock {{label}}">Unlock</a></td></tr>{{/lockouts}}
        {{^lockouts}}<tr><td colspan="6">Nothing is locked.</td></tr>{{/lockouts}}</tbody></table></div>
        """

    static let keys = """
        <table><thead><tr><th scope="col">Key id</th><th scope="col">Algorithm</th><th scope="col">Created</th><th scope="col">State</th></tr></thead>
        <tbody>{{#keys}}<tr><td><code>{{kid}}</code></td><td>{{algorithm}}{{#accessTokens}} (access tokens){{/accessTokens}}</td><td>{{created}}</td><td>{{state}}</td></tr>{{/keys}}</tbody></table>
        <p><a class="button danger" href="/admin/keys/rotate" id="rotate-keys">Rotate the signing keys</a></p>
        """

    static let audit = """
        <form method="get" action="/admin/audit" novalidate><fieldset><legend>Filter</legend>
        <div class="filters">{{#fields}}<div>{{> field}}</div>{{/fields}}</div>
        <button type="submit" id="filter">Filter</button> <a class="button secondary" href="/admin/audit">Clear</a></fieldset></form>
        <table id="audit-events"><thead><tr><th scope="col">Time (UTC)</th><th scope="col">Event</th><th scope="col">App</th><th scope="col">Account</th><th scope="col">By</th><th scope="col">What changed</th></tr></thead>
        <tbody>{{#events}}<tr><td>{{time}}</td><td>{{type}}{{#outcome}} ({{outcome}}){{/outcome}}</td><td>{{app}}</td><td>{{account}}</td><td class="audit-admin">{{admin}}</td><td class="audit-what">{{#hasChanges}}<ul class="changes">{{#changes}}<li><code>{{path}}</code>: {{#list}}{{#added}}<ins>+{{.}}</ins> {{/added}}{{#removed}}<del>&minus;{{.}}</del> {{/removed}}{{/list}}{{^list}}{{before}} &rarr; {{after}}{{/list}}</li>{{/changes}}</ul>{{/hasChanges}}{{#noChange}}<p class="hint">Nothing changed.</p>{{/noChange}}
        {{#hasDetails}}<details><summary>{{#hasChanges}}Full record ({{count}} fields){{/hasChanges}}{{^hasChanges}}{{count}} fields{{/hasChanges}}</summary><dl>{{#details}}<dt>{{key}}</dt><dd>{{#json}}<pre class="json">{{value}}</pre>{{/json}}{{^json}}{{value}}{{/json}}</dd>{{/details}}</dl></details>{{/hasDetails}}</td></tr>{{/events}}
        {{^events}}<tr><td colspan="6">No event matches.</td></tr>{{/events}}</tbody></table>
        {{> pager}}
        """

    static let message = """
        <p>{{message}}</p>
        {{#links}}<p><a class="button{{#secondary}} secondary{{/secondary}}" href="{{href}}"{{#id}} id="{{id}}"{{/id}}>{{label}}</a></p>{{/links}}
        """
}
