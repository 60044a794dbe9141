/// The account page, in the console's layout (`ConsoleTemplates.layout`, without its navigation).
/// Every removal opens a confirmation in place (a `details` element: no script) before its form.
enum AccountTemplates {
    static let account = """
        <dl><dt>Username</dt><dd id="username">{{username}}</dd>{{#name}}<dt>Name</dt><dd>{{name}}</dd>{{/name}}{{#email}}<dt>Email address</dt><dd>{{email}}</dd>{{/email}}
        <dt>Signs in with</dt><dd>{{providers}}</dd><dt>Account created</dt><dd>{{created}}</dd></dl>
        {{#hasPassword}}<h2 id="password">Password</h2>
        {{#recent}}<form method="post" action="/account/password" novalidate><input type="hidden" name="csrf" value="{{csrf}}">
        {{#passwordFields}}{{> field}}{{/passwordFields}}
        <p class="hint">Changing it signs you out of every other browser and app. Devices registered with a sign-in key stay: remove any you do not know below.</p>
        <button type="submit" id="change-password">Change password</button></form>{{/recent}}
        {{^recent}}<p>To change your password, <a href="/account/reauthenticate" id="reauthenticate">sign in again</a> first: your sign-in is more than {{minutes}} minutes old.</p>{{/recent}}{{/hasPassword}}
        <h2 id="devices">Devices</h2>
        <div class="scroll"><table><thead><tr><th scope="col">Name</th><th scope="col">Device</th><th scope="col">Registered</th><th scope="col"><span class="hint">Actions</span></th></tr></thead>
        <tbody>{{#devices}}<tr><td><form method="post" action="/account/devices/{{id}}/rename" class="inline"><input type="hidden" name="csrf" value="{{csrf}}"><label for="alias-{{id}}" class="hint">Name of {{alias}}</label><input type="text" id="alias-{{id}}" name="alias" value="{{alias}}" maxlength="64"> <button type="submit" class="secondary small">Rename</button></form></td><td>{{summary}}</td><td>{{created}}</td>
        <td><details class="confirm"><summary>Remove</summary><p>The device and its sign-in keys go; apps on it are signed out.</p><form method="post" action="/account/devices/{{id}}/remove"><input type="hidden" name="csrf" value="{{csrf}}"><button type="submit" class="danger" aria-label="Remove device {{alias}}">Remove the device</button></form></details></td></tr>{{/devices}}
        {{^devices}}<tr><td colspan="4">None.</td></tr>{{/devices}}</tbody></table></div>
        <h2 id="sessions">Where you are signed in</h2>
        <div class="scroll"><table><thead><tr><th scope="col">Signed in</th><th scope="col">Last seen</th><th scope="col">Apps</th><th scope="col">From</th><th scope="col"><span class="hint">Action</span></th></tr></thead>
        <tbody>{{#sessions}}<tr><td>{{authTime}}{{#current}} <strong>(this browser)</strong>{{/current}}</td><td>{{lastSeen}}</td><td>{{apps}}</td><td>{{from}}</td>
        <td>{{^current}}<details class="confirm"><summary>Sign out</summary><form method="post" action="/account/sessions/{{id}}/end"><input type="hidden" name="csrf" value="{{csrf}}"><button type="submit" class="danger" aria-label="End the session from {{authTime}}">End this session</button></form></details>{{/current}}</td></tr>{{/sessions}}
        {{^sessions}}<tr><td colspan="5">None.</td></tr>{{/sessions}}</tbody></table></div>
        {{#hasOthers}}<details class="confirm"><summary>Sign out everywhere else</summary><form method="post" action="/account/sessions/end-others"><input type="hidden" name="csrf" value="{{csrf}}"><button type="submit" class="danger" id="end-others">End every other session</button></form></details>{{/hasOthers}}
        <h2 id="apps">Apps you allowed</h2>
        <div class="scroll"><table><thead><tr><th scope="col">App</th><th scope="col">What it may see</th><th scope="col">Since</th><th scope="col"><span class="hint">Action</span></th></tr></thead>
        <tbody>{{#consents}}<tr><td>{{app}}</td><td>{{scopes}}</td><td>{{since}}</td>
        <td><details class="confirm"><summary>Take back</summary><form method="post" action="/account/consents/{{appID}}/revoke"><input type="hidden" name="csrf" value="{{csrf}}"><button type="submit" class="danger" aria-label="Take back what {{app}} may see">Take back access</button></form></details></td></tr>{{/consents}}
        {{^consents}}<tr><td colspan="4">None.</td></tr>{{/consents}}</tbody></table></div>
        {{#credentials}}<h2>{{summary}}</h2>
        <div class="scroll"><table class="credentials"><thead><tr>{{#columns}}<th scope="col">{{.}}</th>{{/columns}}<th scope="col"><span class="hint">Action</span></th></tr></thead>
        <tbody>{{#items}}<tr>{{#cells}}<td>{{.}}</td>{{/cells}}<td>{{#removable}}<details class="confirm"><summary>Remove</summary>{{#recent}}<form method="post" action="{{action}}"><input type="hidden" name="csrf" value="{{csrf}}">{{#key}}<input type="hidden" name="key.{{name}}" value="{{value}}">{{/key}}<button type="submit" class="danger" aria-label="Remove {{label}}">Remove it</button></form>{{/recent}}{{^recent}}<p>Only a recent sign-in with it ({{provider}}) removes it: sign in to this page with it (<a href="/account/reauthenticate">sign in again</a>), or ask an administrator.</p>{{/recent}}</details>{{/removable}}</td></tr>{{/items}}
        {{^items}}<tr><td colspan="{{span}}">None.</td></tr>{{/items}}</tbody></table></div>{{/credentials}}
        """
}
