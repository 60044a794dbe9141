/// The account page, in the console's layout (`ConsoleTemplates.layout`, without its navigation).
/// Every removal opens a confirmation in place (a `details` element: no script) before its form.
/// It holds no text of its own: `{{t.*}}` are `AccountTexts`, in the person's language, and the
/// per-row texts (`aliasLabel`, `removeLabel`...) come translated with the rows.
enum AccountTemplates {
    /// A button that sets a plugin's credential up through its own flow, or, for a sign-in too old
    /// for it, the way to a fresh one.
    static let enrol = """
        {{#recent}}<form method="post" action="/account/credentials/{{provider}}/add" class="enrol"><input type="hidden" name="csrf" value="{{csrf}}"><button type="submit" class="secondary" id="add-{{provider}}">{{label}}</button></form>{{/recent}}
        {{^recent}}<p class="hint">{{needsRecent}} <a href="/account/reauthenticate">{{t.signInAgain}}</a></p>{{/recent}}
        """

    static let account = """
        <dl><dt>{{t.username}}</dt><dd id="username">{{username}}</dd>{{#name}}<dt>{{t.name}}</dt><dd>{{name}}</dd>{{/name}}{{#email}}<dt>{{t.email}}</dt><dd>{{email}}</dd>{{/email}}
        <dt>{{t.signsInWith}}</dt><dd>{{providers}}</dd><dt>{{t.created}}</dt><dd>{{created}}</dd></dl>
        {{#hasPassword}}<h2 id="password">{{t.password}}</h2>
        {{#recent}}<form method="post" action="/account/password" novalidate><input type="hidden" name="csrf" value="{{csrf}}">
        {{#passwordFields}}{{> field}}{{/passwordFields}}
        <p class="hint">{{t.passwordHint}}</p>
        <button type="submit" id="change-password">{{t.changePassword}}</button></form>{{/recent}}
        {{^recent}}<p>{{passwordNeedsRecent}} <a href="/account/reauthenticate" id="reauthenticate">{{t.signInAgain}}</a></p>{{/recent}}{{/hasPassword}}
        <h2 id="devices">{{t.devices}}</h2>
        <div class="scroll"><table><thead><tr><th scope="col">{{t.name}}</th><th scope="col">{{t.device}}</th><th scope="col">{{t.registered}}</th><th scope="col"><span class="hint">{{t.actions}}</span></th></tr></thead>
        <tbody>{{#devices}}<tr><td><form method="post" action="/account/devices/{{id}}/rename" class="inline"><input type="hidden" name="csrf" value="{{csrf}}"><label for="alias-{{id}}" class="hint">{{aliasLabel}}</label><input type="text" id="alias-{{id}}" name="alias" value="{{alias}}" maxlength="64"> <button type="submit" class="secondary small">{{t.rename}}</button></form></td><td>{{summary}}</td><td>{{created}}</td>
        <td><details class="confirm"><summary>{{t.remove}}</summary><p>{{t.deviceRemoveWarning}}</p><form method="post" action="/account/devices/{{id}}/remove"><input type="hidden" name="csrf" value="{{csrf}}"><button type="submit" class="danger" aria-label="{{removeLabel}}">{{t.removeDevice}}</button></form></details></td></tr>{{/devices}}
        {{^devices}}<tr><td colspan="4">{{t.none}}</td></tr>{{/devices}}</tbody></table></div>
        <h2 id="sessions">{{t.sessions}}</h2>
        <div class="scroll"><table><thead><tr><th scope="col">{{t.signedIn}}</th><th scope="col">{{t.lastSeen}}</th><th scope="col">{{t.apps}}</th><th scope="col">{{t.from}}</th><th scope="col"><span class="hint">{{t.action}}</span></th></tr></thead>
        <tbody>{{#sessions}}<tr><td>{{authTime}}{{#current}} <strong>{{t.thisBrowser}}</strong>{{/current}}</td><td>{{lastSeen}}</td><td>{{apps}}</td><td>{{from}}</td>
        <td>{{^current}}<details class="confirm"><summary>{{t.signOut}}</summary><form method="post" action="/account/sessions/{{id}}/end"><input type="hidden" name="csrf" value="{{csrf}}"><button type="submit" class="danger" aria-label="{{endLabel}}">{{t.endThisSession}}</button></form></details>{{/current}}</td></tr>{{/sessions}}
        {{^sessions}}<tr><td colspan="5">{{t.none}}</td></tr>{{/sessions}}</tbody></table></div>
        {{#hasOthers}}<details class="confirm"><summary>{{t.signOutElsewhere}}</summary><form method="post" action="/account/sessions/end-others"><input type="hidden" name="csrf" value="{{csrf}}"><button type="submit" class="danger" id="end-others">{{t.endOthers}}</button></form></details>{{/hasOthers}}
        <h2 id="apps">{{t.appsAllowed}}</h2>
        <div class="scroll"><table><thead><tr><th scope="col">{{t.app}}</th><th scope="col">{{t.maySee}}</th><th scope="col">{{t.since}}</th><th scope="col"><span class="hint">{{t.action}}</span></th></tr></thead>
        <tbody>{{#consents}}<tr><td>{{app}}</td><td>{{scopes}}</td><td>{{since}}</td>
        <td><details class="confirm"><summary>{{t.takeBack}}</summary><form method="post" action="/account/consents/{{appID}}/revoke"><input type="hidden" name="csrf" value="{{csrf}}"><button type="submit" class="danger" aria-label="{{takeBackLabel}}">{{t.takeBackAccess}}</button></form></details></td></tr>{{/consents}}
        {{^consents}}<tr><td colspan="4">{{t.none}}</td></tr>{{/consents}}</tbody></table></div>
        {{#credentials}}<h2>{{summary}}</h2>
        <div class="scroll"><table class="credentials"><thead><tr>{{#columns}}<th scope="col">{{.}}</th>{{/columns}}<th scope="col"><span class="hint">{{t.action}}</span></th></tr></thead>
        <tbody>{{#items}}<tr>{{#cells}}<td>{{.}}</td>{{/cells}}<td>{{#removable}}<details class="confirm"><summary>{{t.remove}}</summary>{{#recent}}<form method="post" action="{{action}}"><input type="hidden" name="csrf" value="{{csrf}}">{{#key}}<input type="hidden" name="key.{{name}}" value="{{value}}">{{/key}}<button type="submit" class="danger" aria-label="{{removeLabel}}">{{t.removeIt}}</button></form>{{/recent}}{{^recent}}<p>{{onlyRecent}} <a href="/account/reauthenticate">{{t.signInAgain}}</a></p>{{/recent}}</details>{{/removable}}</td></tr>{{/items}}
        {{^items}}<tr><td colspan="{{span}}">{{t.none}}</td></tr>{{/items}}</tbody></table></div>{{#add}}{{> enrol}}{{/add}}{{/credentials}}
        {{#hasEnrolments}}<h2 id="set-up">{{t.setUp}}</h2>{{/hasEnrolments}}{{#enrolments}}{{> enrol}}{{/enrolments}}
        """
}
