// An OpenAPI document checked by a real validator (npm @seriousme/openapi-schema-validator,
// pinned in scripts/install-deps.sh: the official JSON schemas of OpenAPI 2.0-3.2), fetched
// from a live server. Usage: node validate_openapi.mjs URL. Prints
// {"valid": bool, "version": "3.1", "errors": [...], "refs_resolved": bool}; exit status 1
// when the document is invalid or a $ref does not resolve.
import {Validator} from "@seriousme/openapi-schema-validator";

const [url] = process.argv.slice(2);
const response = await fetch(url);
const document = await response.json();
const validator = new Validator();
const result = await validator.validate(document);
let refsResolved = false;
let refError = null;
if (result.valid) {
  try {
    validator.resolveRefs();
    refsResolved = true;
  } catch (e) {
    refError = String(e?.message ?? e);
  }
}
console.log(JSON.stringify({valid: result.valid, version: validator.version,
                            errors: result.errors ?? null, refs_resolved: refsResolved,
                            ref_error: refError}));
process.exit(result.valid && refsResolved ? 0 : 1);
