#!/usr/bin/env python3
"""Checks the folder dependency rules of Sources/Bluebonnet (CONTRIBUTING.md, "Folders and their rules").

Each top-level folder (and Transport/AsyncHTTPClient, the engine) is a concept. A file depends on another folder when it
names a type declared at the top level of a file there (comments and string literals aside). Every such dependency
must be allowed by RULES below or listed, with its reason, in ALLOWED; and only the engine folder imports NIO or
AsyncHTTPClient. A member an extension adds to a type of another folder (a method a feature adds to `Request`) counts
too: a file that calls it depends on the folder that declares it, when its name is declared nowhere else.

    scripts/check-dependencies.py            fails (exit 1) on a dependency the rules do not allow
    scripts/check-dependencies.py --graph    prints every folder's dependencies, with the types behind each

It also checks the command-line client's library, Sources/BonnetKit: it reaches Bluebonnet through its public API
only (no `@testable` or `@_spi` import), never links the test server or NIO, and its folders follow CLI_RULES.
"""
import os
import re
import sys

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "Sources", "Bluebonnet")
ENGINE = "Transport/AsyncHTTPClient"
# The WebSocket engine: NIO channels of its own, with the HTTP engine's trust, TLS and proxy pieces.
SOCKET_ENGINE = "Transport/NIOWebSocket"
ENGINES = {ENGINE, SOCKET_ENGINE}

# Primitives, errors and support depend on nothing else (HTTP and Errors name each other: a URL that fails to convert
# throws an AFError, and AFError carries headers).
FOUNDATION = {"Support", "HTTP", "Errors"}
# Alamofire's vocabulary, which every kind of request speaks: interceptors, monitors, the data and upload requests,
# responses, the async API, encoders, serializers and validators.
API = {"Interception", "Events", "Requests", "Responses", "Async", "Encoding", "Serialization", "Validation"}
# Features plug into the lifecycle's seams and depend on the core, never on each other.
FEATURES = {
    "Redirects", "Authentication", "Downloads", "Streaming", "Security", "Cache", "Cookies", "Reachability", "Compression",
    "Observability", "WebSocket",
}

# What each folder may depend on. The lifecycle names no concrete feature and no request kind; only the session
# names concrete engines and features; only the engine imports NIO or AsyncHTTPClient.
RULES = {
    "Support": set(),
    "HTTP": {"Support", "Errors"},
    "Errors": {"Support", "HTTP"},
    "Transport": FOUNDATION,
    "Lifecycle": FOUNDATION | {"Transport", "Interception", "Events"},
    ENGINE: FOUNDATION | {"Transport", "Security"},
    SOCKET_ENGINE: FOUNDATION | {"Transport", "Security", ENGINE},
    "Session": FOUNDATION | {"Transport", "Lifecycle", ENGINE, SOCKET_ENGINE} | API | FEATURES,
}
# Within the vocabulary each folder names only what its table lists, so a new edge between them is a reviewed change:
# encoding names nothing of it; responses know the lifecycle; requests are built from encoding, interception, events,
# responses and the async API; validation and serialization read requests and responses; the async API wraps requests
# and their serializers (Requests and Async name each other: a request hands out its async task, which awaits it).
CORE = FOUNDATION | {"Transport", "Lifecycle"}
API_RULES = {
    "Encoding": FOUNDATION,
    "Interception": CORE | {"Session"},
    "Responses": CORE,
    "Events": CORE | {"Requests", "Responses"},
    "Requests": CORE | {"Session", "Async", "Encoding", "Events", "Interception", "Responses"},
    "Validation": CORE | {"Requests", "Responses"},
    "Serialization": CORE | {"Requests", "Responses", "Validation", "Async"},
    "Async": CORE | {"Requests", "Responses", "Serialization", "Events"},
}
assert set(API_RULES) == API
RULES.update(API_RULES)
for folder in FEATURES:
    RULES[folder] = FOUNDATION | {"Transport", "Lifecycle", "Session"} | API

# Named exceptions: (from folder, type) -> why.
ALLOWED = {
    ("Errors", "ServerTrust"): "AFError's server trust reasons carry the trust that failed, as Alamofire's do",
    ("Errors", "RevocationTrustEvaluator"): "AFError's revocation reason carries the evaluator's options, as Alamofire's does",
    ("Errors", "ImageResponseSerializer"): "AFError's image serialization reason names the format that was cut short",
    ("Events", "DownloadRequest"): "Alamofire's EventMonitor has events for every kind of request",
    ("Events", "DownloadResponse"): "Alamofire's EventMonitor has events for every kind of request",
    ("Events", "DataStreamRequest"): "Alamofire's EventMonitor has events for every kind of request",
}
ALLOWED_IMPORTS = {
    ("Security", "NIOSSL"): "a client certificate is handed to the engine as NIOSSL's key and chain",
}
ENGINE_MODULES = re.compile(r"^\s*import\s+(NIO\w*|AsyncHTTPClient)\b", re.M)

DECLARATION = re.compile(
    r"^(?:@[\w.]+(?:\([^)]*\))?\s+)*(?:(?:public|internal|private|fileprivate|package|open|final|indirect|nonisolated)"
    r"(?:\(set\))?\s+)*(?:class|struct|enum|protocol|actor|typealias)\s+([A-Za-z_]\w*)", re.M)
IDENTIFIER = re.compile(r"(?<![.\w])[A-Z]\w*")


# Sources/BonnetKit: the console and the exit are the ground everything stands on; items, printing, sessions and the
# connection's options are pieces the request plans with; the request command, its exchange and the download put them
# together; the WebSocket and reachability commands use the pieces, never the request command.
CLI_ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "Sources", "BonnetKit")
CLI_GROUND = {"Console", "Errors"}
CLI_PIECES = {"Items", "Printing", "Sessions", "Connection"}
CLI_RULES = {
    "Console": {"Errors"},
    "Errors": set(),
    "Items": CLI_GROUND,
    "Printing": CLI_GROUND | {"Request", "Download"},
    "Sessions": CLI_GROUND,
    "Connection": CLI_GROUND,
    "Request": CLI_GROUND | CLI_PIECES | {"Download"},
    "Download": CLI_GROUND | CLI_PIECES | {"Request"},
    "WebSocket": CLI_GROUND | CLI_PIECES,
    "Reachability": CLI_GROUND,
}
CLI_ALLOWED = {
    ("Console", "PartFile"): "standard output is written in full the way a download's file is",
    ("Console", "RequestCommand"): "the list of the client's commands names the request command",
    ("Console", "WebSocketCommand"): "the list of the client's commands names the WebSocket command",
    ("Console", "ReachabilityCommand"): "the list of the client's commands names the reachability command",
}
CLI_IMPORTS = {"Bluebonnet", "ArgumentParser", "Foundation", "FoundationNetworking", "FoundationXML", "Synchronization",
               "Glibc", "Darwin", "CZlib"}
IMPORT = re.compile(r"^\s*((?:@[\w()]+\s+)*)import\s+(\w+)", re.M)


# Sources/BluebonnetOpenAPI: the OpenAPI transport uses Bluebonnet's public API and the one SPI made for it (a
# stream request with a streamed body, the operation's context key); Bluebonnet itself never imports OpenAPIRuntime.
OPENAPI_ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "Sources", "BluebonnetOpenAPI")
OPENAPI_IMPORTS = {"Bluebonnet", "OpenAPIRuntime", "HTTPTypes", "Tracing", "Foundation", "FoundationNetworking",
                   "Synchronization"}
OPENAPI_SPI = "@_spi(OpenAPITransport)"


def check_openapi(problems):
    """BluebonnetOpenAPI's imports, and that the library does not import OpenAPIRuntime."""
    for directory, _, names in os.walk(OPENAPI_ROOT):
        for name in sorted(n for n in names if n.endswith(".swift")):
            path = os.path.join(directory, name)
            relative = "BluebonnetOpenAPI/" + os.path.relpath(path, OPENAPI_ROOT)
            for attributes, module in IMPORT.findall(open(path, encoding="utf-8").read()):
                if module not in OPENAPI_IMPORTS:
                    problems.append(f"{relative}: imports {module}; BluebonnetOpenAPI imports only "
                                    f"{', '.join(sorted(OPENAPI_IMPORTS))}")
                if "@testable" in attributes or ("@_spi" in attributes and attributes.strip() != OPENAPI_SPI):
                    problems.append(f"{relative}: {attributes.strip()} import {module}; only {OPENAPI_SPI} is allowed")
    for directory, _, names in os.walk(ROOT):
        for name in sorted(n for n in names if n.endswith(".swift")):
            path = os.path.join(directory, name)
            for _, module in IMPORT.findall(open(path, encoding="utf-8").read()):
                if module in ("OpenAPIRuntime", "HTTPTypes"):
                    problems.append(f"{os.path.relpath(path, ROOT)}: Bluebonnet must not import {module}")


def read_sources(root, folder):
    """Every Swift file under `root`, stripped, and the folder (as `folder` names it) that declares each type."""
    files = []
    for directory, _, names in os.walk(root):
        files += [os.path.join(directory, name) for name in names if name.endswith(".swift")]
    texts = {path: strip(open(path, encoding="utf-8").read()) for path in files}
    owner = {}
    for path, text in texts.items():
        for name in DECLARATION.findall(text):
            owner.setdefault(name, folder(path))
    return texts, owner


def check_cli(problems):
    """BonnetKit's imports and folder rules."""
    texts, owner = read_sources(CLI_ROOT, lambda path: os.path.relpath(path, CLI_ROOT).split(os.sep)[0])
    for path, text in sorted(texts.items()):
        relative = "BonnetKit/" + os.path.relpath(path, CLI_ROOT)
        folder = os.path.relpath(path, CLI_ROOT).split(os.sep)[0]
        for attributes, module in IMPORT.findall(open(path, encoding="utf-8").read()):
            if module not in CLI_IMPORTS:
                problems.append(f"{relative}: imports {module}; BonnetKit imports only {', '.join(sorted(CLI_IMPORTS))}")
            if "@testable" in attributes or "@_spi" in attributes:
                problems.append(f"{relative}: {attributes.strip()} import {module}; BonnetKit uses public API only")
        for name in sorted(set(IDENTIFIER.findall(text))):
            target = owner.get(name)
            if target is None or target == folder:
                continue
            if folder not in CLI_RULES:
                problems.append(f"{relative}: folder {folder} has no rule")
            elif target not in CLI_RULES[folder] and (folder, name) not in CLI_ALLOWED:
                problems.append(f"{relative}: {folder} must not depend on {target} (names {name})")


def folder_of(path):
    relative = os.path.relpath(path, ROOT)
    for engine in ENGINES:
        if relative.startswith(engine + os.sep):
            return engine
    return relative.split(os.sep)[0]


def strip(source):
    """The source without comments and string literals (interpolations included: they rarely name types)."""
    out, i, n = [], 0, len(source)
    while i < n:
        if source.startswith("//", i):
            j = source.find("\n", i)
            i = n if j < 0 else j
        elif source.startswith("/*", i):
            j = source.find("*/", i + 2)
            i = n if j < 0 else j + 2
        elif source.startswith('"""', i):
            j = source.find('"""', i + 3)
            i = n if j < 0 else j + 3
            out.append('""')
        elif source[i] == '"':
            j = i + 1
            while j < n and source[j] != '"' and source[j] != "\n":
                j += 2 if source[j] == "\\" else 1
            i = j + 1
            out.append('""')
        else:
            out.append(source[i])
            i += 1
    return "".join(out)


CONTRIBUTING = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "CONTRIBUTING.md")
DOC_BEGIN, DOC_END = "<!-- dependency-rules:begin -->", "<!-- dependency-rules:end -->"


def rules_text():
    """The rules and their named exceptions as CONTRIBUTING.md quotes them: one line per folder, then the exceptions."""
    lines = ["```"]
    width = max(len(folder) for folder in RULES)
    for folder in sorted(RULES):
        allowed = ", ".join(sorted(RULES[folder])) or "(nothing)"
        lines.append(f"{folder.ljust(width)}  may name  {allowed}")
    lines.append("")
    lines.append("Named exceptions:")
    for (folder, name), why in sorted(ALLOWED.items()):
        lines.append(f"  {folder} names {name}: {why}")
    for (folder, module), why in sorted(ALLOWED_IMPORTS.items()):
        lines.append(f"  {folder} imports {module}: {why}")
    lines.append("```")
    return "\n".join(lines)


def check_contributing(problems):
    """CONTRIBUTING.md quotes the script's tables word for word; `--write-doc` rewrites its quote."""
    document = open(CONTRIBUTING, encoding="utf-8").read()
    begin, end = document.find(DOC_BEGIN), document.find(DOC_END)
    if begin < 0 or end < begin:
        problems.append(f"CONTRIBUTING.md: no {DOC_BEGIN} ... {DOC_END} block quoting the rules")
        return
    quoted = document[begin + len(DOC_BEGIN):end].strip()
    if quoted == rules_text():
        return
    if "--write-doc" in sys.argv:
        document = document[:begin + len(DOC_BEGIN)] + "\n" + rules_text() + "\n" + document[end:]
        open(CONTRIBUTING, "w", encoding="utf-8").write(document)
        return
    problems.append("CONTRIBUTING.md: its quote of the rules differs from this script's tables; "
                    "run scripts/check-dependencies.py --write-doc")


EXTENSION = re.compile(
    r"^(?:@[\w.]+(?:\([^)]*\))?\s+)*(?:(?:public|internal|package)\s+)?extension\s+[\w.<>, ]+?(?:\s*:[^{]*|\s+where[^{]*)?\{",
    re.M)
MEMBER = re.compile(
    r"^    (?:@[\w.]+(?:\([^)]*\))?\s+)*(?:(?:public|internal|package|open|static|class|final|override|mutating|"
    r"nonisolated|convenience)\s+)*(?:func|var)\s+([a-z_]\w*)", re.M)
# Names an extension declares here that other modules' types declare too, so a use may be theirs: (name) -> whose.
EXTERNAL_MEMBERS = {
    "addHandler": "NIO's ChannelPipeline.addHandler, which the engines call",
}
ANY_DECLARATION = re.compile(r"\b(?:func|var|let|case)\s+`?([a-z_]\w*)")


def block_at(text, start):
    """The text of the block whose `{` is at `start`, braces balanced."""
    depth = 0
    for index in range(start, len(text)):
        if text[index] == "{":
            depth += 1
        elif text[index] == "}":
            depth -= 1
            if depth == 0:
                return text[start:index + 1]
    return text[start:]


def extension_members(texts, folder):
    """Members that top-level extensions declare (not private), by name, with the folder that declares each: only
    names declared once in the whole library, so that a use can only mean that member."""
    declared = {}
    for text in texts.values():
        for name in ANY_DECLARATION.findall(text):
            declared[name] = declared.get(name, 0) + 1
    members = {}
    for path, text in texts.items():
        for match in EXTENSION.finditer(text):
            # An extension that adds a conformance implements its protocol's requirements (`makeIterator`), which
            # are called through the protocol, not through this folder.
            if re.search(r"extension\s+[\w.<>, ]+?\s*:", match.group(0)):
                continue
            for name in MEMBER.findall(block_at(text, match.end() - 1)):
                if declared.get(name) == 1 and name not in EXTERNAL_MEMBERS:
                    members[name] = folder(path)
    return members


def main():
    texts, owner = read_sources(ROOT, folder_of)
    members = extension_members(texts, folder_of)
    names = "|".join(sorted(members, key=len, reverse=True))
    # `.name` (not a label), or `name(` called unqualified from another extension of the same type.
    member_use = re.compile(r"\.(" + names + r")\b(?!\s*:)|(?<![.\w])(" + names + r")\s*\(") if members else None
    graph, problems = {}, []
    for path, text in sorted(texts.items()):
        source_folder = folder_of(path)
        relative = os.path.relpath(path, ROOT)
        for module in ENGINE_MODULES.findall(open(path, encoding="utf-8").read()):
            if source_folder not in ENGINES and (source_folder, module) not in ALLOWED_IMPORTS:
                problems.append(f"{relative}: imports {module}; only {' and '.join(sorted(ENGINES))} may")
        for name in sorted(set(IDENTIFIER.findall(text))):
            target = owner.get(name)
            if target is None or target == source_folder:
                continue
            graph.setdefault(source_folder, {}).setdefault(target, set()).add(name)
            if source_folder not in RULES:
                problems.append(f"{relative}: folder {source_folder} has no rule")
            elif target not in RULES[source_folder] and (source_folder, name) not in ALLOWED:
                problems.append(f"{relative}: {source_folder} must not depend on {target} (names {name})")
        used = {qualified or called for qualified, called in member_use.findall(text)} if member_use else set()
        for name in sorted(used):
            target = members[name]
            if target == source_folder:
                continue
            graph.setdefault(source_folder, {}).setdefault(target, set()).add("." + name)
            if source_folder in RULES and target not in RULES[source_folder] and (source_folder, name) not in ALLOWED:
                problems.append(f"{relative}: {source_folder} must not depend on {target} (calls .{name}, an "
                                f"extension member declared there)")
    check_cli(problems)
    check_openapi(problems)
    check_contributing(problems)
    if "--graph" in sys.argv:
        for source_folder in sorted(graph):
            print(source_folder)
            for target, names in sorted(graph[source_folder].items()):
                print(f"  -> {target}: {', '.join(sorted(names))}")
    for problem in sorted(set(problems)):
        print(problem, file=sys.stderr)
    if problems:
        print(f"{len(set(problems))} dependencies break the folder rules (CONTRIBUTING.md)", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
