import test from 'ava';
import { isIP } from 'node:net';
import { isIpAddress } from '../../src/model/ip-address.js';

test('isIpAddress agrees with net.isIP, except that a zone index is refused as Kubernetes refuses it', (t) => {
  const samples = [
    '1.2.3.4',
    '255.255.255.255',
    '256.1.1.1',
    '01.2.3.4',
    '1.2.3',
    '1.2.3.4.5',
    '0.0.0.0',
    '10.0.0.1 ',
    '::',
    '::1',
    'fe80::1',
    '2001:db8::ff00:42:8329',
    '::ffff:192.168.1.1',
    '1::2::3',
    '12345::',
    'abc',
    '',
    'g::1',
    '1:2:3:4:5:6:7:8',
    '1:2:3:4:5:6:7:8:9',
    '[::1]',
    '::1/64',
    '1.2.3.4/24',
    'v1.2.3',
    '1.02.3.4',
    '127.1',
    '0x7f.0.0.1',
  ];
  for (const s of samples) t.is(isIpAddress(s), isIP(s) !== 0, JSON.stringify(s));
  t.false(isIpAddress('fe80::1%eth0'));
});
