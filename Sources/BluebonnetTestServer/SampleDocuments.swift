/// The fixed documents httpbin serves, written out here.
enum SampleDocuments {
    static var slideshow: [String: Any] {
        [
            "slideshow": [
                "author": "Yours Truly",
                "date": "date of publication",
                "slides": [
                    ["title": "Wake up to WonderWidgets!", "type": "all"],
                    [
                        "items": ["Why <em>WonderWidgets</em> are great", "Who <em>buys</em> WonderWidgets"],
                        "title": "Overview", "type": "all",
                    ],
                ],
                "title": "Sample Slide Show",
            ] as [String: Any]
        ]
    }

    static let xml = """
        <?xml version='1.0' encoding='us-ascii'?>

        <!--  A SAMPLE set of slides  -->

        <slideshow
            title="Sample Slide Show"
            date="Date of publication"
            author="Yours Truly"
            >

            <!-- TITLE SLIDE -->
            <slide type="all">
              <title>Wake up to WonderWidgets!</title>
            </slide>

            <!-- OVERVIEW -->
            <slide type="all">
                <title>Overview</title>
                <item>Why <em>WonderWidgets</em> are great</item>
                <item/>
                <item>Who <em>buys</em> WonderWidgets</item>
            </slide>

        </slideshow>

        """

    static let html = """
        <!DOCTYPE html>
        <html>
          <head>
          </head>
          <body>
              <h1>Herman Melville - Moby-Dick</h1>
              <div>
                <p>
                  Availing himself of the mild, summer-cool weather that now reigned in these latitudes, and in \
        preparation for the peculiarly active pursuits shortly to be anticipated, Perth, the begrimed, blistered old \
        blacksmith, had not removed his portable forge to the hold again, after concluding his contributory work for \
        Ahab's leg, but still retained it on deck.
                </p>
              </div>
          </body>
        </html>
        """

    static let utf8Demo = """
        <h1>Unicode Demo</h1>
        <p>Mathematics: ∮ E⋅da = Q,  n → ∞, ∑ f(i) = ∏ g(i)</p>
        <p>Greek: Σὲ γνωρίζω ἀπὸ τὴν κόψη τοῦ σπαθιοῦ τὴν τρομερή</p>
        <p>Runes: ᚻᛖ ᚳᚹᚫᚦ ᚦᚫᛏ ᚻᛖ ᛒᚢᛞᛖ ᚩᚾ ᚦᚫᛗ ᛚᚪᚾᛞᛖ ᚾᚩᚱᚦᚹᛖᚪᚱᛞᚢᛗ ᚹᛁᚦ ᚦᚪ ᚹᛖᛥᚫ</p>
        <p>Japanese: いろはにほへとちりぬるを</p>
        <p>Emoji: 🌼 🐝 ☕</p>

        """
}
