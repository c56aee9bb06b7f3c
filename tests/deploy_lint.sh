#!/usr/bin/env bash
# deploy_lint.sh TOOLS_VENV DEPLOY_DIR CHECK: one checker of deploy/, from the virtual environment
# that tools/install_deps.sh fills (CHECK: hadolint, kubernetes-validate or checkov). A finding
# fails the test; one that is accepted carries its reason beside it, in the file (hadolint
# ignore / checkov skip comments). Exits 77 (skipped) when the checker is not installed.
set -uo pipefail
tools=$1 deploy=$2 check=$3
bin="$tools/bin/$check"
if [ ! -x "$bin" ]; then
  echo "$check is not installed in $tools: run tools/install_deps.sh (MATSERVE_DEPLOY_TOOLS=$tools)"
  exit 77
fi
case "$check" in
  hadolint)
    "$bin" --failure-threshold info "$deploy/Dockerfile" ;;
  kubernetes-validate)
    # The Kubernetes resources (kustomization.yaml files are kustomize's own; the
    # ServiceMonitor is a CRD, with no schema here). --strict rejects unknown fields.
    "$bin" --strict "$deploy"/k8s/namespace.yaml "$deploy"/k8s/deployment.yaml \
      "$deploy"/k8s/service.yaml "$deploy"/k8s/networkpolicy.yaml "$deploy"/k8s/job-load.yaml ;;
  checkov)
    # Offline (--skip-download: no Prisma Cloud look-ups); every check of both frameworks.
    "$bin" --directory "$deploy" --framework dockerfile kubernetes --skip-download --compact --quiet ;;
  *)
    echo "deploy_lint.sh: unknown check $check" >&2; exit 2 ;;
esac
