import CXMLSec
import Foundation
import GatehousePluginKit

/// A parsed XML document from outside (an IdP's response or metadata), held by libxml2. Parsing is
/// defensive: no network, no external entities, and any document type declaration (where XXE and
/// entity expansion live) stops the parser before it declares anything. Not `Sendable`: one request
/// holds it from parse to last read.
final class SAMLXMLDocument {
    let doc: xmlDocPtr

    /// The most a document may weigh: an IdP's response with an encrypted, signed assertion and its
    /// certificates is a few tens of kilobytes; metadata of a federation far more, but we read one IdP's.
    static let maximumSize = 1 << 20

    /// Parses `data`; throws for anything not well-formed, with a DTD, or too large.
    init(parsing data: Data) throws(SAMLError) {
        XMLSecurityLibrary.ensureInitialised()
        guard !data.isEmpty, data.count <= Self.maximumSize else { throw SAMLError.malformed("the XML document is empty or too large") }
        let parsed: (doc: xmlDocPtr?, sawDTD: Bool) = data.withUnsafeBytes { raw in
            guard let base = raw.baseAddress?.assumingMemoryBound(to: CChar.self),
                let context = xmlCreateMemoryParserCtxt(base, Int32(raw.count))
            else { return (nil, false) }
            defer { xmlFreeParserCtxt(context) }
            // A DTD is where external entities and entity expansion live: SAML never needs one, so
            // the first sign of one stops the parser before any entity is declared.
            context.pointee.sax.pointee.internalSubset = { ctx, _, _, _ in
                guard let ctx else { return }
                let parser = ctx.assumingMemoryBound(to: xmlParserCtxt.self)
                parser.pointee._private = UnsafeMutableRawPointer(bitPattern: 1)
                xmlStopParser(parser)
            }
            context.pointee.sax.pointee.entityDecl = { ctx, _, _, _, _, _ in
                guard let ctx else { return }
                let parser = ctx.assumingMemoryBound(to: xmlParserCtxt.self)
                parser.pointee._private = UnsafeMutableRawPointer(bitPattern: 1)
                xmlStopParser(parser)
            }
            _ = xmlCtxtUseOptions(context, Int32(XML_PARSE_NONET.rawValue | XML_PARSE_NOERROR.rawValue | XML_PARSE_NOWARNING.rawValue))
            _ = xmlParseDocument(context)
            let sawDTD = context.pointee._private != nil
            let doc = context.pointee.myDoc
            context.pointee.myDoc = nil
            guard context.pointee.wellFormed != 0, !sawDTD, let doc else {
                if let doc { xmlFreeDoc(doc) }
                return (nil, sawDTD)
            }
            return (doc, false)
        }
        if parsed.sawDTD { throw SAMLError.malformed("the XML document declares a DTD, which SAML never needs") }
        guard let doc = parsed.doc else { throw SAMLError.malformed("the XML document is not well-formed") }
        if doc.pointee.intSubset != nil || doc.pointee.extSubset != nil {
            xmlFreeDoc(doc)
            throw SAMLError.malformed("the XML document declares a DTD, which SAML never needs")
        }
        self.doc = doc
        // Two attributes of one local name on an element (`URI` and `x:URI`) are refused outright:
        // xmlsec reads by local name in any namespace, the checks here without one.
        for element in allElements() where element.hasAttributeTwins {
            throw SAMLError.malformed("the \(element.name) element has two attributes named alike in different namespaces")
        }
    }

    deinit { xmlFreeDoc(doc) }

    /// The document element.
    var root: SAMLXMLNode? { xmlDocGetRootElement(doc).map(SAMLXMLNode.init) }

    /// The document as text (for tests and for metadata we serve).
    func serialized() -> String {
        var buffer: UnsafeMutablePointer<xmlChar>?
        var size: Int32 = 0
        xmlDocDumpMemoryEnc(doc, &buffer, &size, "UTF-8")
        defer { gatehouse_xml_free(buffer) }
        guard let buffer else { return "" }
        return String(decoding: UnsafeBufferPointer(start: buffer, count: Int(size)), as: UTF8.self)
    }

    /// Every element in document order.
    func allElements() -> [SAMLXMLNode] {
        guard let root else { return [] }
        var found: [SAMLXMLNode] = []
        func walk(_ node: SAMLXMLNode) {
            found.append(node)
            node.elementChildren.forEach(walk)
        }
        walk(root)
        return found
    }

    /// How many elements anywhere carry an identifier attribute of this value (`ID`, `Id`, `id`, in
    /// any namespace, `xml:id` included): a signature reference must point at exactly one element, or
    /// a wrapped copy could be the one verified.
    func elementsWithID(_ value: String) -> Int {
        allElements().filter { node in
            var attribute = node.pointer.pointee.properties
            while let current = attribute {
                let name = current.pointee.name.map { String(cString: $0) } ?? ""
                if ["ID", "Id", "id"].contains(name), let text = xmlNodeGetContent(UnsafeMutableRawPointer(current).assumingMemoryBound(to: xmlNode.self)) {
                    defer { gatehouse_xml_free(text) }
                    if String(cString: text) == value { return true }
                }
                attribute = current.pointee.next
            }
            return false
        }.count
    }

    /// Tells libxml2 that `node`'s `ID` attribute (no namespace) is an XML ID, so `#value` references
    /// resolve to it. An ID registered already must be this element's.
    func registerID(of node: SAMLXMLNode) throws(SAMLError) {
        guard let attribute = xmlHasNsProp(node.pointer, "ID", nil), let value = node.attribute("ID") else {
            throw SAMLError.malformed("the \(node.name) element has no ID")
        }
        if xmlGetID(doc, value) == nil {
            guard xmlAddID(nil, doc, value, attribute) != nil else { throw SAMLError.malformed("the \(node.name) element's ID is not usable") }
        }
        guard elementOwningID(value) == node.pointer else { throw SAMLError.signature("the ID \(value) belongs to another element") }
    }

    /// The element the registered XML ID `value` resolves to.
    func elementOwningID(_ value: String) -> xmlNodePtr? {
        xmlGetID(doc, value)?.pointee.parent
    }
}

/// One element of a `SAMLXMLDocument`, valid while the document lives.
struct SAMLXMLNode {
    let pointer: xmlNodePtr

    init(_ pointer: xmlNodePtr) { self.pointer = pointer }

    /// The element's local name.
    var name: String { pointer.pointee.name.map { String(cString: $0) } ?? "" }
    /// The element's namespace URI.
    var namespace: String? { pointer.pointee.ns?.pointee.href.map { String(cString: $0) } }

    /// Whether this is `name` in `namespace`.
    func isElement(_ name: String, in namespace: String) -> Bool { self.name == name && self.namespace == namespace }

    /// The child elements, in order.
    var elementChildren: [SAMLXMLNode] {
        var children: [SAMLXMLNode] = []
        var child = pointer.pointee.children
        while let node = child {
            if node.pointee.type == XML_ELEMENT_NODE { children.append(SAMLXMLNode(node)) }
            child = node.pointee.next
        }
        return children
    }

    /// The child elements named `name` in `namespace`.
    func children(_ name: String, in namespace: String) -> [SAMLXMLNode] { elementChildren.filter { $0.isElement(name, in: namespace) } }

    /// The one child named `name` in `namespace`: nil when there is none, an error when there are several.
    func onlyChild(_ name: String, in namespace: String) throws(SAMLError) -> SAMLXMLNode? {
        let found = children(name, in: namespace)
        guard found.count <= 1 else { throw SAMLError.malformed("\(self.name) has \(found.count) \(name) elements") }
        return found.first
    }

    /// An attribute without a namespace. Nil too when an attribute of that local name has a
    /// namespace: xmlsec reads attributes by local name in any namespace, so `x:URI` beside `URI`
    /// could make it see another value than the checks here did.
    func attribute(_ name: String) -> String? {
        var property = pointer.pointee.properties
        while let current = property {
            if current.pointee.ns != nil, let local = current.pointee.name, String(cString: local) == name { return nil }
            property = current.pointee.next
        }
        guard let value = xmlGetNoNsProp(pointer, name) else { return nil }
        defer { gatehouse_xml_free(value) }
        return String(cString: value)
    }

    /// The element's text when it holds text only. A comment, a processing instruction or an
    /// element inside is refused rather than skipped: `victim@example.com<!---->.evil` must not
    /// read as the part before the comment, which the signature does not see.
    func text() throws(SAMLError) -> String {
        var text = ""
        var child = pointer.pointee.children
        while let node = child {
            switch node.pointee.type {
            case XML_TEXT_NODE, XML_CDATA_SECTION_NODE:
                if let content = node.pointee.content { text += String(cString: content) }
            default:
                throw SAMLError.malformed("the \(name) element holds more than text")
            }
            child = node.pointee.next
        }
        return text
    }

    /// Whether two of the element's attributes share a local name (in different namespaces).
    var hasAttributeTwins: Bool {
        var seen: Set<String> = []
        var property = pointer.pointee.properties
        while let current = property {
            let name = current.pointee.name.map { String(cString: $0) } ?? ""
            if !seen.insert(name).inserted { return true }
            property = current.pointee.next
        }
        return false
    }

    /// The parent element, if any.
    var parent: SAMLXMLNode? {
        guard let parent = pointer.pointee.parent, parent.pointee.type == XML_ELEMENT_NODE else { return nil }
        return SAMLXMLNode(parent)
    }
}

/// libxml2 and xmlsec are set up once per process, quietly: their messages would go to stderr.
enum XMLSecurityLibrary {
    private static let initialised: Bool = {
        xmlInitParser()
        gatehouse_xml_install_silence()
        xmlSecErrorsDefaultCallbackEnableOutput(0)
        guard xmlSecInit() >= 0, xmlSecCheckVersionExt(XMLSEC_VERSION_MAJOR, XMLSEC_VERSION_MINOR, XMLSEC_VERSION_SUBMINOR, xmlSecCheckVersionABICompatible) == 1,
            xmlSecOpenSSLAppInit(nil) >= 0, xmlSecOpenSSLInit() >= 0
        else { return false }
        return true
    }()

    /// Whether xmlsec is usable; set up on first use.
    @discardableResult
    static func ensureInitialised() -> Bool { initialised }
}
