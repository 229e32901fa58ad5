/**
 * The Widget custom resource (test.kperturb.dev/v1) of test/proxy/fixtures/dial-controller.ts, the
 * controller that sits in silent dials, and a kperturb.yaml's head for it: for the settle-window tests of learn
 * and explore.
 */
import { fileURLToPath } from 'node:url';

const DIAL_CONTROLLER = fileURLToPath(new URL('../proxy/fixtures/dial-controller.js', import.meta.url));

/** The head of a kperturb.yaml for the dial controller with `env`, its CRD written to crd.yaml (WIDGET_CRD). */
export const dialConfigHead = (env: Record<string, string>): string => `apiVersion: kperturb.dev/v1
kind: ControllerUnderTest
metadata: { name: dial }
controller:
  command: ${JSON.stringify(process.execPath)}
  args: [${JSON.stringify(DIAL_CONTROLLER)}]
  env: ${JSON.stringify(env)}
setup: [crd.yaml]
`;

export const WIDGET_CRD = `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: { name: widgets.test.kperturb.dev }
spec:
  group: test.kperturb.dev
  scope: Namespaced
  names: { kind: Widget, plural: widgets, singular: widget, listKind: WidgetList }
  versions:
    - name: v1
      served: true
      storage: true
      subresources: { status: {} }
      schema:
        openAPIV3Schema:
          type: object
          properties:
            spec: { type: object, properties: { size: { type: integer, minimum: 1, maximum: 9 } } }
            status: { type: object, properties: { observedGeneration: { type: integer }, size: { type: integer } } }
`;
