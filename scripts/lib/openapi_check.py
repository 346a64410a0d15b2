#!/usr/bin/env python3
"""Checks docs/openapi.yaml against what the service does (OpenAPIDocumentTests runs it).

usage: openapi_check.py DOCUMENT lint
       openapi_check.py DOCUMENT routes < lines of "METHOD /path/{param}" (the router's routes)
       openapi_check.py DOCUMENT responses < JSON lines {"method", "path", "status", "content_type", "body"}
           (path: as asked, or the route's template; body: the response's text)

lint: every object schema lists `required` and sets `additionalProperties: false`; no operation has a `default`
response; every $ref resolves. routes: the router's routes and the document's operations are the same set.
responses: each response's status is documented for its operation, with its content type, and a JSON body validates
against the documented schema (JSON Schema 2020-12, as OpenAPI 3.1 uses it); a path or method the document does not
have must be refused, 404 or 405 with an error body.
Prints what is wrong, one line each, and exits 1 when anything is."""
import json, sys

import jsonschema
import yaml

METHODS = ["get", "put", "post", "delete", "options", "head", "patch", "trace"]


def load(path):
    with open(path) as f:
        return yaml.safe_load(f)


def walk(node, where, visit):
    visit(node, where)
    if isinstance(node, dict):
        for key, value in node.items():
            walk(value, f"{where}/{key}", visit)
    elif isinstance(node, list):
        for index, value in enumerate(node):
            walk(value, f"{where}/{index}", visit)


def resolve(document, ref):
    node = document
    for part in ref.removeprefix("#/").split("/"):
        node = node[part]
    return node


def lint(document):
    problems = []

    def visit(node, where):
        if not isinstance(node, dict):
            return
        if "$ref" in node:
            try:
                resolve(document, node["$ref"])
            except (KeyError, TypeError):
                problems.append(f"{where}: $ref {node['$ref']} does not resolve")
        if node.get("type") == "object":
            if "required" not in node:
                problems.append(f"{where}: an object schema without `required`")
            if node.get("additionalProperties") is not False:
                problems.append(f"{where}: an object schema without `additionalProperties: false`")

    walk(document, "#", visit)
    for path, item in document.get("paths", {}).items():
        for method in METHODS:
            if method in item and "default" in item[method].get("responses", {}):
                problems.append(f"{method.upper()} {path}: a `default` response")
    return problems


def operations(document):
    return {f"{method.upper()} {path}" for path, item in document.get("paths", {}).items() for method in METHODS if method in item}


def routes(document, lines):
    routed = {line.strip() for line in lines if line.strip()}
    documented = operations(document)
    return [f"routed, not in the document: {r}" for r in sorted(routed - documented)] + \
           [f"in the document, not routed: {d}" for d in sorted(documented - routed)]


def template_of(document, path):
    """The document's path that `path` is (a `{name}` segment matches any one segment), else `path` itself."""
    paths = document.get("paths", {})
    if path in paths:
        return path
    segments = path.strip("/").split("/")
    for template in paths:
        parts = template.strip("/").split("/")
        if len(parts) == len(segments) and all(p == s or (p.startswith("{") and p.endswith("}")) for p, s in zip(parts, segments)):
            return template
    return path


def response_schema(document, operation, status):
    responses = operation.get("responses", {})
    response = responses.get(str(status))
    if response is None:
        return None
    if "$ref" in response:
        response = resolve(document, response["$ref"])
    return response


def responses(document, lines):
    problems = []
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        seen = json.loads(line)
        where = f"{seen['method']} {seen['path']} -> {seen['status']}"
        template = template_of(document, seen["path"])
        operation = document.get("paths", {}).get(template, {}).get(seen["method"].lower())
        if operation is None:
            # A path or method the document does not have: refused as the API refuses what it does not route.
            if seen["status"] not in (404, 405):
                problems.append(f"{where}: not an operation of the document, and not refused with 404 or 405")
                continue
            operation = {"responses": {str(seen["status"]): {"content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}}}}
        response = response_schema(document, operation, seen["status"])
        if response is None:
            problems.append(f"{where}: status not documented")
            continue
        content = response.get("content", {})
        media = (seen.get("content_type") or "").split(";")[0].strip()
        if not content:
            if seen.get("body"):
                problems.append(f"{where}: a body where none is documented")
            continue
        if media not in content:
            problems.append(f"{where}: content type {media or '(none)'} not documented ({', '.join(content)})")
            continue
        schema = content[media].get("schema")
        if schema is None or media != "application/json":
            continue
        try:
            body = json.loads(seen["body"])
        except ValueError as error:
            problems.append(f"{where}: not JSON: {error}")
            continue
        validator = jsonschema.Draft202012Validator(
            {"$ref": "#/wrapped", "wrapped": schema, "components": document.get("components", {})},
            format_checker=jsonschema.Draft202012Validator.FORMAT_CHECKER)
        for error in sorted(validator.iter_errors(body), key=lambda e: list(e.absolute_path)):
            at = "/".join(str(p) for p in error.absolute_path)
            problems.append(f"{where}: at /{at}: {error.message[:300]}")
    return problems


def main():
    if len(sys.argv) != 3 or sys.argv[2] not in ("lint", "routes", "responses"):
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    document = load(sys.argv[1])
    mode = sys.argv[2]
    problems = lint(document) if mode == "lint" else routes(document, sys.stdin) if mode == "routes" else responses(document, sys.stdin)
    for problem in problems:
        print(problem)
    sys.exit(1 if problems else 0)


main()
