/** The CRD the structural-schema tests use (test/cluster/crd-schema.test.ts, test/real/crd-schema.real.ts). */

/**
 * A CRD with the shapes of rabbitmq's RabbitmqCluster (config/crd/bases/rabbitmq.com_rabbitmqclusters.yaml
 * at 4f13b9a942): scalar defaults, default objects whose fields have defaults of their own, an
 * int-or-string default, defaults inside array items, an embedded resource, a preserve-unknown-fields
 * subtree and a status with defaults.
 */
export function brokerCrd(): Record<string, any> {
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: 'brokers.example.com' },
    spec: {
      group: 'example.com',
      scope: 'Namespaced',
      names: { plural: 'brokers', singular: 'broker', kind: 'Broker' },
      versions: [
        {
          name: 'v1',
          served: true,
          storage: true,
          subresources: { status: {} },
          schema: {
            openAPIV3Schema: {
              type: 'object',
              properties: {
                apiVersion: { type: 'string' },
                kind: { type: 'string' },
                metadata: { type: 'object' },
                spec: {
                  type: 'object',
                  properties: {
                    replicas: { type: 'integer', format: 'int32', minimum: 0, default: 1 },
                    image: { type: 'string', default: 'broker:3.8' },
                    terminationGracePeriodSeconds: { type: 'integer', format: 'int64', minimum: 0, default: 604800 },
                    persistence: {
                      type: 'object',
                      default: { storage: '10Gi' },
                      properties: {
                        storage: { anyOf: [{ type: 'integer' }, { type: 'string' }], 'x-kubernetes-int-or-string': true, default: '10Gi' },
                        storageClassName: { type: 'string' },
                      },
                    },
                    resources: {
                      type: 'object',
                      default: { limits: { cpu: '2000m', memory: '2Gi' }, requests: { cpu: '1000m', memory: '2Gi' } },
                      properties: {
                        limits: {
                          type: 'object',
                          additionalProperties: { anyOf: [{ type: 'integer' }, { type: 'string' }], 'x-kubernetes-int-or-string': true },
                        },
                        requests: {
                          type: 'object',
                          additionalProperties: { anyOf: [{ type: 'integer' }, { type: 'string' }], 'x-kubernetes-int-or-string': true },
                        },
                      },
                    },
                    service: {
                      type: 'object',
                      // The default object is defaulted deeper (type).
                      default: { annotations: { a: 'b' } },
                      properties: {
                        annotations: { type: 'object', additionalProperties: { type: 'string' } },
                        type: { type: 'string', enum: ['ClusterIP', 'LoadBalancer', 'NodePort'], default: 'ClusterIP' },
                      },
                    },
                    ports: {
                      type: 'array',
                      items: {
                        type: 'object',
                        properties: { name: { type: 'string' }, port: { type: 'integer' }, protocol: { type: 'string', default: 'TCP' } },
                      },
                    },
                    tls: { type: 'object', properties: { secretName: { type: 'string' } } },
                    note: { type: 'string', nullable: true },
                    plugins: { type: 'object', additionalProperties: { type: 'object', properties: { enabled: { type: 'boolean', default: true } } } },
                    template: {
                      type: 'object',
                      'x-kubernetes-embedded-resource': true,
                      properties: { spec: { type: 'object', properties: { paused: { type: 'boolean' } } } },
                    },
                    extra: {
                      type: 'object',
                      'x-kubernetes-preserve-unknown-fields': true,
                      properties: { known: { type: 'object', properties: { a: { type: 'string' } } } },
                    },
                  },
                },
                status: {
                  type: 'object',
                  properties: {
                    phase: { type: 'string', default: 'Pending' },
                    conditions: {
                      type: 'array',
                      items: { type: 'object', properties: { type: { type: 'string' }, status: { type: 'string', default: 'Unknown' } } },
                    },
                  },
                },
              },
            },
          },
        },
      ],
    },
  };
}
