"""`xcviz check`'s results as JUnit XML, as CI systems read them."""
from __future__ import annotations

import re


def junit_xml(results: list, suite: str) -> str:
    """JUnit XML (one testcase per expectation: analysis.check.Result), as CI systems read it."""
    import xml.etree.ElementTree as ET

    failures = sum(not r.ok for r in results)
    root = ET.Element("testsuites", tests=str(len(results)), failures=str(failures))
    ts = ET.SubElement(root, "testsuite", name=suite, tests=str(len(results)), failures=str(failures), errors="0")
    for r in results:
        name, message = xml_text(r.name), xml_text(r.message)
        case = ET.SubElement(ts, "testcase", classname="xcviz.check", name=name)
        if r.ok:
            ET.SubElement(case, "system-out").text = message
        else:
            ET.SubElement(case, "failure", message=message, type="expectation").text = message
    return ET.tostring(root, encoding="unicode", xml_declaration=True) + "\n"


# what XML 1.0 cannot hold, even escaped: C0 controls but tab/LF/CR, surrogates, U+FFFE/U+FFFF (ElementTree
# escapes markup but writes these as they are, and the file then does not parse)
_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")


def xml_text(text: str) -> str:
    """`text` with every character XML cannot hold written as a visible escape (\\x1b), so names stay legible."""
    return _NOT_XML.sub(lambda m: f"\\x{ord(m.group()):02x}" if ord(m.group()) < 0x100 else f"\\u{ord(m.group()):04x}",
                        str(text))
