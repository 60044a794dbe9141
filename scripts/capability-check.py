#!/usr/bin/env python3
"""A plugin implements a capability's method only where it also adopts the capability's protocol.

A capability is found by its conformance (`extension LDAPProvider: Rechecking {}`), so a method
written without it would never be called, and nothing else would say so. For each folder that holds
plugins (Plugins/*, the test plugins, GatehouseTesting's, the guide's), every method or property
that only a capability asks for must come with that capability's name in a conformance there.
"""
import pathlib
import re
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
# What only each capability asks for, as plugins write it.
CAPABILITIES = {
    "HealthReporting": r"func health\(\) async -> PluginHealth",
    "Diagnosable": r"func diagnose\(username:",
    "Forgetting": r"func forget\(_ departure: Departure\)",
    "Rechecking": r"func recheck\(subject:",
    "AssertionVerifying": r"func verifyAssertion\(_ assertion: String, for app:",
    "HandingOver": r"func resume\(_ state: FlowState, after identity:",
    "FlowStopping": r"func stopping\(_ state: FlowState",
    "IdentityCompleting": r"func identifiedFlowCompleted\(",
    "KeyUseChecking": r"func checkKeyUse\(",
    "FactorChaining": r"func resume\(_ state: FlowState, after passed:",
    "AdminResourceOffering": r"var adminResources: \[AdminResource\]",
    "AccountOperationOffering": r"var accountOperations: \[AccountOperation\]",
    "EndpointOffering": r"var endpoints: \[PluginEndpoint\]",
    "AddressVerifying": r"func sendCode\(to address: EmailAddress",
    "DeviceAttesting": r"func verifyRegistration\(_ evidence: AttestationEvidence",
    "PasswordKeeping": r"func addUser\(username:",
}


def folders():
    plugins = [p for p in sorted((ROOT / "Plugins").iterdir()) if p.is_dir() and p.name not in ("BuiltIn", "CLDAP")]
    return plugins + [ROOT / "Tests/RiddlePlugin", ROOT / "Tests/GuideExamples", ROOT / "Sources/GatehouseTesting", ROOT / "Tests/GatehouseCoreTests"]


def main():
    problems = []
    for folder in folders():
        text = "\n".join(re.sub(r"//[^\n]*", "", p.read_text()) for p in sorted(folder.rglob("*.swift")))
        # Every protocol name that appears in a type's or an extension's conformance list.
        adopted = set()
        for match in re.finditer(r"(?:struct|class|enum|actor|extension)\s+\w+(?:<[^>]*>)?\s*:\s*([^{]+)\{", text):
            adopted |= {name.strip() for name in match.group(1).split(",")}
        for capability, pattern in CAPABILITIES.items():
            if re.search(pattern, text) and capability not in adopted:
                problems.append(f"{folder.relative_to(ROOT)}: implements {capability}'s requirement but adopts no {capability}")
    for problem in problems:
        print(problem, file=sys.stderr)
    if problems:
        return 1
    print(f"every capability implemented in {len(folders())} plugin folders is adopted")
    return 0


if __name__ == "__main__":
    sys.exit(main())
