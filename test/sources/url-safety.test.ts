import { describe, expect, it } from "vitest";
import { checkUrl, classifyIp, parseIpv4, parseIpv6 } from "../../schema/url-safety.ts";

const strict = { allowPrivate: false };

describe("classifyIp", () => {
  // [address, a word the reason must contain]
  const refused: Array<[string, string]> = [
    ["127.0.0.1", "loopback"],
    ["2130706433", "loopback"],
    ["0177.0.0.1", "loopback"],
    ["0x7f.1", "loopback"],
    ["0x7f000001", "loopback"],
    ["127.1", "loopback"],
    ["017700000001", "loopback"],
    ["0.0.0.0", "unspecified"],
    ["0", "unspecified"],
    ["10.1.2.3", "private"],
    ["172.31.255.255", "private"],
    ["192.168.1.1", "private"],
    ["169.254.169.254", "link-local"],
    ["100.64.0.1", "carrier-grade"],
    ["100.100.100.200", "carrier-grade"],
    ["224.0.0.251", "multicast"],
    ["239.255.255.250", "multicast"],
    ["255.255.255.255", "broadcast"],
    ["240.0.0.1", "reserved"],
    ["198.18.0.1", "benchmarking"],
    ["192.0.2.1", "documentation"],
    ["203.0.113.9", "documentation"],
    ["::", "unspecified"],
    ["[::]", "unspecified"],
    ["::1", "loopback"],
    ["[::1]", "loopback"],
    ["0:0:0:0:0:0:0:1", "loopback"],
    ["::ffff:127.0.0.1", "loopback"],
    ["[::ffff:7f00:1]", "loopback"],
    ["::ffff:169.254.169.254", "link-local"],
    ["::127.0.0.1", "loopback"],
    ["::a00:1", "private"],
    ["64:ff9b::10.0.0.1", "private"],
    ["64:ff9b::7f00:1", "loopback"],
    ["64:ff9b:1::1", "NAT64"],
    ["2002:7f00:1::", "loopback"],
    ["2002:a9fe:a9fe::1", "link-local"],
    ["fe80::1", "link-local"],
    ["fd00:ec2::254", "unique local"],
    ["fc00::1", "unique local"],
    ["ff02::1", "multicast"],
    ["2001:db8::1", "documentation"],
    ["2001:0:4136:e378:8000:63bf:3fff:fdd2", "IETF"],
    ["fe80::1%eth0", "scoped"],
    ["100::1", "not a global unicast"],
    ["not-an-ip", "not a valid"],
    ["1.2.3.4.5", "not a valid"],
    ["256.1.1.1", "not a valid"],
    ["1:2:3:4:5:6:7:8:9", "not a valid"],
  ];
  it.each(refused)("refuses %s", (address, word) => {
    const verdict = classifyIp(address);
    expect(verdict).not.toBe("public");
    expect(verdict).toContain(word);
  });

  it.each(["8.8.8.8", "93.184.216.34", "1.1.1.1", "2606:4700::1111", "2a00:1450:4001::200e"])(
    "accepts public %s",
    (address) => expect(classifyIp(address)).toBe("public"),
  );

  it("parses every inet_aton form to the same number", () => {
    for (const form of [
      "127.0.0.1",
      "2130706433",
      "0177.0.0.1",
      "0x7f.1",
      "127.1",
      "0x7f.0.0.01",
    ]) {
      expect(parseIpv4(form)).toBe(0x7f000001);
    }
    expect(parseIpv4("1.2.65535")).toBe(0x0102ffff);
    expect(parseIpv4("1.2.65536")).toBeNull();
  });

  it("expands IPv6 with compression and dotted tails", () => {
    expect(parseIpv6("::ffff:1.2.3.4")).toEqual([0, 0, 0, 0, 0, 0xffff, 0x0102, 0x0304]);
    expect(parseIpv6("1::")).toEqual([1, 0, 0, 0, 0, 0, 0, 0]);
    expect(parseIpv6("1:2:3:4:5:6:1.2.3.4")).toEqual([1, 2, 3, 4, 5, 6, 0x0102, 0x0304]);
    expect(parseIpv6("1::2::3")).toBeNull();
  });
});

describe("checkUrl", () => {
  const refusedUrls: Array<[string, string]> = [
    ["http://2130706433/video.mp4", "loopback"],
    ["http://0177.0.0.1/video.mp4", "loopback"],
    ["http://0x7f.1/", "loopback"],
    ["http://127.1/", "loopback"],
    ["http://[::]/", "unspecified"],
    ["http://[::1]/", "loopback"],
    ["http://[::ffff:127.0.0.1]/", "loopback"],
    ["http://[::ffff:7f00:1]/", "loopback"],
    ["http://169.254.169.254/latest/meta-data/", "link-local"],
    ["http://[fd00:ec2::254]/latest/meta-data/", "unique local"],
    ["http://100.100.100.200/latest/meta-data/", "carrier-grade"],
    ["http://metadata.google.internal/computeMetadata/v1/", "metadata"],
    ["http://metadata/computeMetadata/v1/", "metadata"],
    ["http://localhost/", "local"],
    ["http://LOCALHOST./", "local"],
    ["http://app.localhost/", "local-only"],
    ["http://db.internal/", "local-only"],
    ["http://printer.local/", "local-only"],
    ["http://intranet/", "fully qualified"],
    ["http://user:pass@example.com/v.mp4", "user name or password"],
    ["http://example.com@127.0.0.1/v.mp4", "user name or password"],
    ["http://example.com:8080/v.mp4", "port 8080"],
    ["https://example.com:22/", "port 22"],
    ["file:///etc/passwd", "scheme file:"],
    ["ftp://example.com/v.mp4", "scheme ftp:"],
    ["gopher://example.com:70/_GET", "scheme gopher:"],
    ["data:video/mp4;base64,AAAA", "scheme data:"],
    ["javascript:alert(1)", "scheme javascript:"],
    ["not a url", "not a valid URL"],
  ];
  it.each(refusedUrls)("refuses %s", (url, word) => {
    const result = checkUrl(url, strict);
    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.reason).toContain(word);
  });

  it("accepts public http and https on default and explicit ports", () => {
    for (const url of [
      "https://example.com/v.mp4",
      "http://example.com:80/a",
      "https://8.8.8.8:443/",
    ]) {
      expect(checkUrl(url, strict)).toMatchObject({ ok: true });
    }
  });

  it("requires https for webhooks unless private networks are allowed", () => {
    const webhook = "http://hooks.example.com/stills";
    expect(checkUrl(webhook, { allowPrivate: false, requireHttps: true })).toMatchObject({
      ok: false,
      reason: expect.stringContaining("https"),
    });
    expect(checkUrl(webhook, { allowPrivate: true, requireHttps: true }).ok).toBe(true);
  });

  it("allowPrivate lifts address and port checks, nothing else", () => {
    const lax = { allowPrivate: true };
    expect(checkUrl("http://127.0.0.1:5123/v.mp4", lax).ok).toBe(true);
    expect(checkUrl("http://localhost:9/v.mp4", lax).ok).toBe(true);
    expect(checkUrl("file:///etc/passwd", lax).ok).toBe(false);
    expect(checkUrl("http://u:p@127.0.0.1/", lax).ok).toBe(false);
  });
});
