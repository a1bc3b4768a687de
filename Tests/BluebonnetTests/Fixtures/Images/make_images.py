"""Regenerates the image fixtures (needs Pillow: pip install pillow). The tests use the committed files."""
from PIL import Image, ImageDraw


def picture(width, height, color, mode="RGB"):
    image = Image.new(mode, (width, height), color)
    ImageDraw.Draw(image).ellipse([width // 4, height // 4, 3 * width // 4, 3 * height // 4], fill="white")
    return image


frames = [picture(30, 20, (i * 70, 90, 160)) for i in range(3)]
picture(40, 30, (200, 30, 30)).save("red-40x30.png")
frames[0].save("animated-30x20-3frames.png", save_all=True, append_images=frames[1:], duration=100, loop=0)
picture(48, 32, (30, 120, 200)).save("baseline-48x32.jpg", quality=85)
picture(64, 40, (30, 200, 120)).save("progressive-64x40.jpg", quality=85, progressive=True)
frames[0].save("animated-30x20-3frames.gif", save_all=True, append_images=frames[1:], duration=100, loop=0)
picture(32, 24, (40, 160, 60)).save("lossy-32x24.webp", quality=80)
picture(33, 25, (160, 40, 60)).save("lossless-33x25.webp", lossless=True)
picture(34, 26, (60, 40, 160, 128), mode="RGBA").save("extended-alpha-34x26.webp", quality=80)
frames[0].save("animated-30x20-3frames.webp", save_all=True, append_images=frames[1:], duration=100, loop=0)
picture(21, 13, (90, 90, 20)).save("odd-21x13.bmp")
picture(27, 17, (20, 90, 90)).save("small-27x17.tiff")
picture(48, 48, (120, 20, 120)).save("icon-48.ico", sizes=[(16, 16), (48, 48)])
